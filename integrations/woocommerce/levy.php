<?php
/**
 * Plugin Name: levy for TaxJar for WooCommerce
 * Description: Sends the "TaxJar - Sales Tax Automation for WooCommerce" plugin's API calls to a levy serve (its TaxJar v2 request shape, under /v2/) instead of api.taxjar.com. A must-use plugin: copy this file to wp-content/mu-plugins/. See docs/integrations.md in levy.
 * Version: 0.1.0
 * License: the license of levy
 *
 * Where levy answers: the constant LEVY_TAXJAR_URL (in wp-config.php), else the option
 * levy_taxjar_url (`wp option update levy_taxjar_url http://127.0.0.1:8787`), the address
 * of `levy serve` with or without its /v2/ path. With neither, nothing is changed and the
 * TaxJar plugin calls TaxJar. The plugin's API token setting takes a levy API key (a test
 * key for its sandbox, a live key otherwise): levy reads its `Token token="…"` header.
 */

if ( ! defined( 'ABSPATH' ) ) {
	exit;
}

/**
 * The base URL levy's TaxJar shape answers at, ending in /v2/, or '' when none is set or
 * the one set is not an http(s) URL.
 *
 * @return string
 */
function levy_taxjar_base_url() {
	$given = defined( 'LEVY_TAXJAR_URL' ) ? (string) LEVY_TAXJAR_URL : (string) get_option( 'levy_taxjar_url', '' );
	$given = trim( $given );
	if ( '' === $given ) {
		return '';
	}
	$scheme = wp_parse_url( $given, PHP_URL_SCHEME );
	if ( 'http' !== $scheme && 'https' !== $scheme ) {
		error_log( 'levy: levy_taxjar_url must be an http(s) URL; the TaxJar plugin is left calling TaxJar' );
		return '';
	}
	$base = rtrim( $given, '/' );
	if ( '/v2' !== substr( $base, -3 ) ) {
		$base .= '/v2';
	}
	return $base . '/';
}

/**
 * Points TaxJar_API_Request at levy, once the TaxJar plugin has loaded its classes. Its
 * request URL is the static base URL followed by the endpoint (`taxes`,
 * `transactions/orders`, ...); releases of the plugin without a public static $base_url
 * are left alone, and say so in the log.
 */
function levy_taxjar_point_at_levy() {
	$base = levy_taxjar_base_url();
	if ( '' === $base || ! class_exists( 'TaxJar_API_Request' ) ) {
		return;
	}
	try {
		$property = new ReflectionProperty( 'TaxJar_API_Request', 'base_url' );
	} catch ( ReflectionException $e ) {
		$property = null;
	}
	if ( null === $property || ! $property->isStatic() || ! $property->isPublic() ) {
		error_log( 'levy: this release of the TaxJar plugin has no public static TaxJar_API_Request::$base_url; it is left calling TaxJar' );
		return;
	}
	TaxJar_API_Request::$base_url = $base;
}

// The TaxJar plugin loads its classes on plugins_loaded; its first request is later (a cart,
// an order, a settings page). Both hooks run before any of them.
add_action( 'plugins_loaded', 'levy_taxjar_point_at_levy', 100 );
add_action( 'init', 'levy_taxjar_point_at_levy', 0 );
