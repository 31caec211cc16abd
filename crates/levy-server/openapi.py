"""Writes openapi.json: the OpenAPI 3.1 document of the interface as levy implements it.

Run from crates/levy-server: `python3 openapi.py > openapi.json`. The operations are
those in levy-api's route table (src/router.rs) plus GET /openapi.json; the ErrorType
enum is every error type constructed in levy-api's source plus the HTTP layer's own.
`cargo test -p levy-server --test openapi` fails when the file and the code disagree.
"""
import json, os, re, sys

HERE = os.path.dirname(os.path.abspath(__file__))
API_SRC = os.path.join(HERE, "..", "levy-api", "src")
# Errors of Service::open, keys::create_account_keys and the import command: never an HTTP answer.
NOT_HTTP = {"KEYS_FILE_ERROR", "TABLE_ERROR", "INVALID_ACCOUNT", "INVALID_IMPORT"}
HTTP_ERRORS = ["REQUEST_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE", "MALFORMED_BODY", "REQUEST_TIMEOUT", "INTERNAL_ERROR"]

def api_sources():
    for root, _, files in os.walk(API_SRC):
        for f in sorted(files):
            if f.endswith(".rs"):
                with open(os.path.join(root, f)) as fh:
                    yield fh.read().split("#[cfg(test)]")[0]

def helpers(texts):
    """Functions that take `kind: &'static str` and build an error with it."""
    names = set()
    for text in texts:
        for m in re.finditer(r"fn\s+([a-z_][a-z0-9_]*)\s*(?:<[^>]*>)?\(([^)]*)\)", text):
            if "kind: &'static str" in m.group(2):
                names.add(m.group(1))
    return names

def error_types():
    texts = list(api_sources())
    tokens = ["ApiError::new(", "ApiError::field(", "kind: "] + [n + "(" for n in sorted(helpers(texts))]
    kinds = set(HTTP_ERRORS)
    for text in texts:
        for token in tokens:
            for m in re.finditer(r"(?<![A-Za-z0-9_])" + re.escape(token), text):
                window = text[m.end(): m.end() + 300]
                o = window.find('"')
                if o < 0: continue
                c = window.find('"', o + 1)
                if c < 0: continue
                lit, before = window[o + 1:c], window[:o]
                if all(ch.isdigit() or ch in ", \n\t\r" for ch in before) and re.fullmatch(r"[A-Z][A-Z0-9_]*", lit):
                    kinds.add(lit)
    return sorted(kinds - NOT_HTTP)

def routes():
    """{(METHOD, pattern): first version or None} from levy-api's route tables."""
    with open(os.path.join(API_SRC, "router.rs")) as fh:
        text = fh.read()
    out = {}
    for m in re.finditer(r'\(\s*"(GET|POST|PUT|PATCH|DELETE)",\s*"(/[^"]*)",\s*[A-Za-z_:]+\s*(?:,\s*ApiVersion::V(\d{4})_(\d\d)_(\d\d)\s*)?,?\s*\)', text):
        since = f"{m.group(3)}-{m.group(4)}-{m.group(5)}" if m.group(3) else None
        out[(m.group(1), m.group(2))] = since
    doc = re.search(r'DOCUMENT_PATH: &str = "([^"]*)"', text)
    if doc:
        out[("GET", doc.group(1))] = "document"
    return out

def erase(path):
    return "/".join("{}" if seg.startswith("{") else seg for seg in path.split("/"))

def ref(n): return {"$ref": f"#/components/schemas/{n}"}
def s(t, desc=None, **kw):
    d = {"type": t}
    if desc: d["description"] = desc
    d.update(kw); return d
STR = lambda d=None, **kw: s("string", d, **kw)
INT = lambda d=None, **kw: s("integer", d, **kw)
NUM = lambda d=None, **kw: s("number", d, **kw)
BOOL = lambda d=None, **kw: s("boolean", d, **kw)
def obj(props, required=None, desc=None, additional=None):
    d = {"type": "object", "properties": props}
    if required: d["required"] = required
    if desc: d["description"] = desc
    if additional is not None: d["additionalProperties"] = additional
    return d
def arr(items, desc=None): 
    d = {"type": "array", "items": items}
    if desc: d["description"] = desc
    return d
TESTMODE = {"description": "True for a test key. A boolean on calculations, products, refunds and merchants; the string \"true\"/\"false\" on transactions. Clients accept both.",
            "oneOf": [{"type": "boolean"}, {"type": "string", "enum": ["true", "false"]}]}
AMOUNT = {"description": "Amount in the currency's smallest unit (cents for USD, whole yen for JPY).", "type": ["number", "string"]}
METADATA = obj({}, desc="Arbitrary keys; every value shorter than 255 characters.", additional=True)

address_props = {k: STR() for k in ["address_line_1", "address_line_2", "address_city", "address_province", "address_postal_code", "address_country"]}
schemas = {
 "Address": obj(dict(address_props, address_type=STR("`shipping` or `billing`", enum=["shipping", "billing"])),
                desc="A postal address. `address_province` is the ISO 3166-2 subdivision without the country; `address_country` is ISO 3166-1 alpha-2. Postal code, province and country are required for calculations."),
 "ResolvedAddress": obj(address_props, desc="The resolved address used; fields may be empty strings."),
 "Customer": obj({"id": STR("Service-assigned customer ID (`cus_…`)"), "object": STR(enum=["tax.customer"]),
                  "reference_customer_id": {"type": ["string", "null"]}, "name": {"type": ["string", "null"]}, "email": STR(),
                  "is_tax_exempt": BOOL(default=False), "testmode": TESTMODE, "created_at": INT(),
                  "type": STR("2025-05-12 and later", enum=["CONSUMER", "BUSINESS"]),
                  "tax_ids": arr(obj({"type": STR(enum=["VAT", "GST", "EIN"]), "value": STR()}), "2025-05-12 and later")}),
 "CustomerCreate": obj({"reference_customer_id": STR(), "name": STR(), "email": STR(), "is_tax_exempt": BOOL(default=False),
                        "type": STR("2025-05-12 and later", enum=["CONSUMER", "BUSINESS"]),
                        "tax_ids": arr(obj({"type": STR(enum=["VAT", "GST", "EIN"]), "value": STR()}, ["type", "value"]), "2025-05-12 and later")}, ["email"]),
 "Product": obj({"object": STR(enum=["tax.product"]), "reference_product_id": STR(), "reference_product_name": STR(),
                 "product_category": STR("For example GENERAL_MERCHANDISE, CLOTHING, SAAS_GENERAL"), "created_at": INT(), "updated_at": INT(), "testmode": TESTMODE}),
 "ProductCreate": obj({"reference_product_id": STR(), "reference_product_name": STR(), "product_category": STR("A product category of the rate table")},
                       ["reference_product_id", "reference_product_name", "product_category"]),
 "ProductList": obj({"last_product_id": {"type": ["string", "null"]}, "products": arr(ref("Product"), "Up to 50 products"), "has_more": BOOL()}),
 "Deleted": obj({"object": STR(enum=["tax.customer", "tax.product", "tax.transaction"]), "id": STR("Customers and transactions"),
                 "reference_product_id": STR("Products"), "deleted_at": INT("Epoch seconds")}),
 "Jurisdiction": obj({"tax_rate": NUM("Statutory rate as a fraction, e.g. 0.07"), "tax_due_decimal": NUM("Unrounded tax due in minor units"),
                      "rate_type": STR(), "jurisdiction_name": STR(), "fee_amount": AMOUNT, "tax_authority_name": STR(),
                      "tax_authority_type": STR(enum=["STATE", "COUNTY", "CITY", "DISTRICT", "COUNTRY", ""]), "tax_type": STR(enum=["SALES", "USE", "VAT", "GST"]),
                      "note": STR("`RATE_FRAC` when the rate applies to the whole amount; another value (e.g. `PROGRESSIVE_RATE`) when to part of it"),
                      "rule_id": INT("levy extension: the rule of the rate table that produced the entry")},
                     desc="`jurisdiction_name` in 2024-09-01; `tax_authority_name`, `tax_authority_type`, `tax_type` from 2026-01-01; `tax_due_decimal` on transactions and refunds, and on calculations from 2026-03-01."),
 "LineItem": obj({"line_item_id": STR(), "product": obj({"reference_product_name": s(["string", "null"], "The registered product's name; null when the line names no registered product"), "reference_product_id": s(["string", "null"], "null when the line names no registered product"), "reference_line_item_id": STR(), "product_tax_code": STR()}),
                  "tax_jurisdictions": arr(ref("Jurisdiction")), "quantity": INT(), "tax_amount": AMOUNT, "amount_excluding_tax": AMOUNT, "amount_including_tax": AMOUNT}),
 "CalculationRequest": obj({
     "customer": obj({"type": STR(enum=["CONSUMER", "BUSINESS"], default="CONSUMER"), "id": STR(), "address": ref("Address"),
                      "ip": obj({"value": STR("IPv4 or IPv6 address"), "resolution": STR(enum=["strict", "zero", "approximate", "best_effort"], default="strict")}, ["value"]),
                      "tax_ids": arr(obj({"type": STR(enum=["VAT", "GST", "EIN"]), "value": STR()})),
                      "fallback_type": STR("2026-03-01 and later: the customer type used when `id` names no stored customer", enum=["CONSUMER", "BUSINESS"])},
                     desc="At least one of `address` and `ip`; the address is used first, the IP as fallback."),
     "origin_address": ref("Address"),
     "order_details": obj({"customer_currency_code": STR("ISO-4217"), "tax_included_in_amount": BOOL(), "automatic_tax": STR(enum=["auto", "disabled"]),
                           "line_items": arr(obj({"amount": AMOUNT, "quantity": INT(), "reference_product_id": STR(), "product_category": STR(), "reference_line_item_id": STR()}, ["amount"]))},
                          ["line_items"]),
     "transacted_at": INT("Unix seconds of the sale (2026-03-01 and later)"),
     "metadata": METADATA}, ["customer", "order_details"]),
 "Calculation": obj({"id": STR("`calc_…`"), "object": STR(enum=["tax.calculation"]), "customer_currency_code": STR(), "line_items": arr(ref("LineItem")),
                     "tax_included_in_amount": BOOL(), "total_tax_amount": AMOUNT, "total_amount_excluding_tax": AMOUNT, "total_amount_including_tax": AMOUNT,
                     "expires_at": INT(), "testmode": TESTMODE, "customer": obj({"id": {"type": ["string", "null"]}, "type": STR("2025-05-12 and later")}),
                     "transacted_at": INT("2026-03-01 and later"), "table_hash": STR("levy extension: SHA-256 of the rate table used"), "automatic_tax": STR(enum=["auto", "disabled"]),
                     "address_resolution_status": STR(enum=["EXACT", "POSTAL_FALLBACK_1", "POSTAL_ONLY"]), "address_used": ref("ResolvedAddress"),
                     "location_source": STR(enum=["address", "ip"]), "resolution_precision": STR(enum=["STREET", "POSTAL_PLUS", "POSTAL", "PROVINCE", "COUNTRY", "APPROXIMATED"]),
                     "metadata": METADATA}),
 "TransactionCreate": obj({"calculation_id": STR(), "reference_order_id": STR("Unique among the account's transactions in this mode"),
                           "transaction_processed_at": INT(), "metadata": METADATA}, ["calculation_id", "reference_order_id"]),
 "Transaction": obj({"id": STR("`tr_…`"), "object": STR(enum=["tax.transaction"]), "calculation_id": STR(), "reference_order_id": STR(),
                     "transaction_processed_at": INT(), "customer_currency_code": STR(), "filing_currency_code": STR(), "line_items": arr(ref("LineItem")),
                     "testmode": TESTMODE, "metadata": METADATA, "tax_included_in_amount": BOOL(), "created_at": INT(),
                     "type": STR("Platform transactions only", enum=["order", "fee"])}),
 "RefundCreate": obj({"transaction_id": STR(), "type": STR(enum=["full", "partial"]), "refund_processed_at": INT(),
                      "line_items": arr(obj({"reference_product_id": STR(), "reference_line_item_id": STR(), "quantity": INT(),
                                             "sales_amount_refunded": AMOUNT, "tax_amount_refunded": AMOUNT}), "Required for partial refunds; amounts are negative")},
                     ["transaction_id", "type"]),
 "Refund": obj({"id": STR("`ref_tr_…`"), "object": STR(enum=["tax.refund"]), "refund_type": STR(enum=["full", "partial"]), "testmode": TESTMODE,
                "refund_processed_at": INT(), "line_items": arr(ref("LineItem"), "Negative amounts"), "transaction_id": STR(),
                "reversed_at": {"type": ["integer", "null"], "description": "Epoch seconds of the reversal; null while not reversed"}}),
 "RefundList": obj({"refunds": arr(ref("Refund"))}),
 "RefundReversal": obj({"refund_id": STR()}, ["refund_id"]),
 "Merchant": obj({"id": STR("`merch_…`"), "object": STR(enum=["tax.merchant"]), "reference_merchant_id": STR(), "name": STR(), "email": STR(),
                  "default_address": ref("ResolvedAddress"), "tax_ids": arr(obj({}, additional=True)), "status": STR(enum=["active", "deleted"]),
                  "testmode": BOOL(), "created_at": INT(), "updated_at": INT(), "deleted_at": {"type": ["integer", "null"]}, "metadata": obj({}, desc="At most 50 keys; keys and string values at most 255 characters", additional=STR())}),
 "MerchantWrite": obj({"reference_merchant_id": STR(), "name": STR(), "email": STR(), "default_address": ref("Address"),
                       "tax_ids": arr(obj({}, additional=True)), "metadata": obj({}, additional=STR())}),
 "MerchantList": obj({"object": STR(enum=["list"]), "merchants": arr(ref("Merchant")), "has_more": BOOL(), "last_merchant_id": {"type": ["string", "null"]}}),
 "PlatformCalculationRequest": obj({"customer": obj({}, additional=True), "merchant": obj({"merchant_id": STR()}),
                                    "order_details": obj({"customer_currency_code": STR(), "tax_included_in_amount": BOOL(),
                                                          "line_items": arr(obj({"amount": AMOUNT, "quantity": INT(), "product_category": STR()}, desc="`amount` is the per-unit price"))}),
                                    "fee_details": obj({"line_items": arr(obj({"amount": AMOUNT, "quantity": INT(), "product_category": STR()}))}),
                                    "roles": arr(STR(enum=["marketplace_provider", "payment_processor", "merchant_of_record"])), "transacted_at": INT()}),
 "PlatformCalculation": {"allOf": [ref("Calculation"), obj({
                             "object": STR(enum=["tax.platform_calculation"]), "merchant": obj({"merchant_id": STR(), "id": STR()}),
                             "roles": arr(STR(enum=["marketplace_provider", "payment_processor", "merchant_of_record"])),
                             "fee_line_items": arr(ref("LineItem")),
                             "totals": obj({k: obj({"amount_excluding_tax": AMOUNT, "tax_amount": AMOUNT, "amount_including_tax": AMOUNT}) for k in ["order", "fees"]})})],
                           "description": "A calculation's fields (id `plat_calc_…`) plus the platform's; `total_tax_amount` includes the fees' tax."},
 "PlatformTransactionCreate": obj({"platform_calculation_id": STR(), "reference_order_id": STR(), "reference_payment_id": STR(), "transaction_processed_at": INT()},
                                  ["platform_calculation_id", "reference_order_id"]),
 "PlatformTransactions": obj({"object": STR(enum=["list"]), "transactions": arr(ref("Transaction"), "`order`, plus `fee` for a payment processor")}),
 "CertificateRequest": obj({"id": STR(), "object": STR(enum=["tax.certificate_request"]), "status": STR(enum=["pending", "fulfilled", "canceled", "invalid"]),
                            "type": STR(), "customer": {"type": ["object", "null"], "properties": {"id": STR(), "reference_customer_id": {"type": ["string", "null"]}, "name": {"type": ["string", "null"]}}},
                            "linked_buyer": {"type": ["object", "null"], "properties": {"id": STR(), "legal_name": {"type": ["string", "null"]}}},
                            "jurisdictions": arr({}), "certificate_id": {"type": ["string", "null"]}, "reference": {}, "created_at": INT(), "updated_at": INT(),
                            "canceled_at": {"type": ["integer", "null"]}, "testmode": BOOL()}),
 "CertificateRequestList": obj({"object": STR(enum=["list"]), "certificate_requests": arr(ref("CertificateRequest")), "has_more": BOOL(), "last_request_id": {"type": ["string", "null"]}}),
 "Certificate": obj({"id": STR(), "object": STR(enum=["tax.exemption_certificate"]), "status": STR(enum=["processing", "needs_info", "active", "expiring", "expired", "invalid"]),
                     "type": STR(), "customer": {"type": ["object", "null"], "properties": {"id": STR(), "reference_customer_id": {"type": ["string", "null"]}, "name": {"type": ["string", "null"]}}},
                     "linked_buyer": {"type": ["object", "null"], "properties": {"id": STR(), "legal_name": {"type": ["string", "null"]}}},
                     "jurisdictions": arr({}), "valid_from": {}, "expires_at": {"type": ["integer", "null"]},
                     "download_url": {"type": ["string", "null"], "description": "Pre-signed, path-absolute URL valid about an hour; a new one on every read; null when no document is attached"},
                     "document": {"type": ["object", "null"], "properties": {"content_type": STR(), "size": INT(), "sha256": STR()}},
                     "reference": {}, "created_at": INT(), "updated_at": INT(), "testmode": BOOL()}),
 "CertificateList": obj({"object": STR(enum=["list"]), "certificates": arr(ref("Certificate")), "has_more": BOOL(), "last_certificate_id": {"type": ["string", "null"]}}),
  "Ping": obj({"status": STR(enum=["ok"]), "env": STR(enum=["test", "prod"]), "timestamp": STR("The server's clock, ISO 8601 UTC (`2026-03-01T12:00:00Z`)", format="date-time"), "api_version": STR()}, required=["status", "env", "timestamp", "api_version"]),
}
ERROR_TYPES = error_types()
schemas["ErrorType"] = {"type": "string", "description": "Every `type` this server can answer with (flat format); the older format's `error_code` is the same name in lower snake case.", "enum": ERROR_TYPES}
schemas["ErrorLegacy"] = obj({"error": obj({"error_code": STR("Lower snake case of an ErrorType"), "error_message": STR(),
                                            "error_meta": obj({"field": STR(), "expected": STR(), "received": STR()})}, ["error_code", "error_message"]),
                              "request_id": STR("`req_…`, the same as the `x-request-id` response header")}, ["error", "request_id"],
                             desc="Error body for versions before 2026-01-01.")
schemas["ErrorFlat"] = obj({"code": INT("The HTTP status"), "type": ref("ErrorType"), "message": STR()}, ["code", "type", "message"],
                           desc="Error body for versions 2026-01-01 and later.")

VERSION_PARAM = {"name": "X-API-Version", "in": "header", "required": False,
                 "description": "API version. Absent means 2024-09-01. Versions before 2026-01-01 get ErrorLegacy bodies, later ones ErrorFlat.",
                 "schema": STR(enum=["2024-09-01", "2025-05-12", "2026-01-01", "2026-03-01"], default="2024-09-01")}
ERR = {"description": "An error, in the format of the request's version.",
       "content": {"application/json": {"schema": {"oneOf": [ref("ErrorLegacy"), ref("ErrorFlat")]}}}}
def op(summary, resp_schema, body=None, params=(), since=None, errors=("400", "401"), opid=None, auth=True):
    o = {"operationId": opid, "summary": summary + (f" (API version {since} and later)" if since else ""),
         "parameters": [{"$ref": "#/components/parameters/Version"}] + list(params),
         "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": resp_schema}}}}}
    if body:
        o["requestBody"] = {"required": True, "content": {"application/json": {"schema": body}}}
        errors = tuple(errors) + ("408", "413", "415")
    if "401" in errors: errors = tuple(errors) + ("429",)
    # An operation of a later version answers 404 NOT_FOUND to an earlier one.
    if since and "404" not in errors: errors = tuple(errors) + ("404",)
    for e in errors: o["responses"][e] = {"$ref": "#/components/responses/Error"}
    if not auth: o["security"] = []
    return o
def pp(name, desc): return {"name": name, "in": "path", "required": True, "description": desc, "schema": STR()}
def qp(name, desc): return {"name": name, "in": "query", "required": False, "description": desc, "schema": STR()}
paths = {
 "/tax/ping": {"get": op("Check the key and the service", ref("Ping"), opid="ping")},
 "/tax/customers": {"post": op("Create customer", ref("Customer"), ref("CustomerCreate"), opid="createCustomer", errors=("400", "401", "409"))},
 "/tax/customers/{customer_id}": {
    "get": op("Find customer", ref("Customer"), params=[pp("customer_id", "Customer ID, or the client's ID with `id_type=reference_customer_id`"), qp("id_type", "`id` (default) or `reference_customer_id`")], opid="getCustomer", errors=("400", "401", "404")),
    "delete": op("Delete customer", ref("Deleted"), params=[pp("customer_id", "Customer ID")], opid="deleteCustomer", errors=("400", "401", "404"))},
 "/tax/products": {"post": op("Create product", ref("Product"), ref("ProductCreate"), opid="createProduct", errors=("400", "401", "409")),
                   "get": op("List products, up to 50 per page", ref("ProductList"), params=[qp("cursor", "`last_product_id` of the previous page")], opid="listProducts")},
 "/tax/products/{reference_product_id}": {
    "get": op("Get product", ref("Product"), params=[pp("reference_product_id", "The client's product ID")], opid="getProduct", errors=("400", "401", "404")),
    "delete": op("Delete product", ref("Deleted"), params=[pp("reference_product_id", "The client's product ID")], opid="deleteProduct", errors=("400", "401", "404"))},
 "/tax/calculations": {"post": op("Create calculation", ref("Calculation"), ref("CalculationRequest"), opid="createCalculation", errors=("400", "401", "422"))},
 "/tax/transactions": {"post": op("Record a sale from a calculation", ref("Transaction"), ref("TransactionCreate"), opid="createTransaction", errors=("400", "401", "404", "409"))},
 "/tax/transactions/{transaction_id}": {
    "get": op("Get transaction", ref("Transaction"), params=[pp("transaction_id", "`tr_…`")], opid="getTransaction", errors=("400", "401", "404")),
    "delete": op("Delete transaction", ref("Deleted"), params=[pp("transaction_id", "`tr_…`")], opid="deleteTransaction", errors=("400", "401", "404"))},
 "/tax/transactions/{transaction_id}/refunds": {"get": op("List refunds of a transaction", ref("RefundList"), params=[pp("transaction_id", "`tr_…`")], opid="listRefunds", errors=("400", "401", "404"))},
 "/tax/refunds": {"post": op("Refund a transaction, fully or partly", ref("Refund"), ref("RefundCreate"), opid="createRefund", errors=("400", "401", "404", "409"))},
 "/tax/refund_reversals": {"post": op("Reverse a refund", ref("Refund"), ref("RefundReversal"), opid="reverseRefund", errors=("400", "401", "404", "409"))},
 "/tax/merchants": {"post": op("Create merchant", ref("Merchant"), ref("MerchantWrite"), opid="createMerchant", errors=("400", "401", "409")),
                    "get": op("List merchants", ref("MerchantList"), params=[qp("cursor", "`last_merchant_id` of the previous page"), qp("status", "Filter by status")], opid="listMerchants")},
 "/tax/merchants/{id}": {
    "get": op("Get merchant by merchant ID or reference_merchant_id", ref("Merchant"), params=[pp("id", "`merch_…` or the client's reference_merchant_id")], opid="getMerchant", errors=("400", "401", "404")),
    "post": op("Update merchant", ref("Merchant"), ref("MerchantWrite"), params=[pp("id", "`merch_…` or reference_merchant_id")], opid="updateMerchant", errors=("400", "401", "404")),
    "delete": op("Delete merchant", ref("Merchant"), params=[pp("id", "`merch_…` or reference_merchant_id")], opid="deleteMerchant", errors=("400", "401", "404"))},
 "/tax/platform/calculations": {"post": op("Platform calculation", ref("PlatformCalculation"), ref("PlatformCalculationRequest"), opid="createPlatformCalculation", errors=("400", "401", "404", "422"))},
 "/tax/platform/transactions": {"post": op("Platform transactions", ref("PlatformTransactions"), ref("PlatformTransactionCreate"), opid="createPlatformTransactions", errors=("400", "401", "404", "409"))},
 "/tax/certificate-requests": {"get": op("List certificate requests (live keys only)", ref("CertificateRequestList"),
     params=[qp(n, d) for n, d in [("customer_id", "Filter"), ("reference_customer_id", "Filter"), ("status", "Filter"), ("cursor", "`last_request_id` of the previous page"), ("limit", "1 to 100, default 50")]],
     opid="listCertificateRequests", errors=("400", "401", "403"))},
 "/tax/certificate-requests/{request_id}": {
    "get": op("Get certificate request (live keys only)", ref("CertificateRequest"), params=[pp("request_id", "Certificate request ID")], opid="getCertificateRequest", errors=("400", "401", "403", "404")),
    "delete": op("Cancel certificate request; idempotent (live keys only)", ref("CertificateRequest"), params=[pp("request_id", "Certificate request ID")], opid="cancelCertificateRequest", errors=("400", "401", "403", "404", "409"))},
 "/tax/certificates": {"get": op("List certificates (live keys only)", ref("CertificateList"),
     params=[qp(n, d) for n, d in [("customer_id", "Filter"), ("reference_customer_id", "Filter"), ("jurisdiction", "`US-TN`, or `TN` in any country"), ("status", "Filter"), ("type", "Filter"),
             ("expires_after", "Unix seconds, inclusive"), ("expires_before", "Unix seconds, exclusive"), ("created_after", "Unix seconds, inclusive"), ("created_before", "Unix seconds, exclusive"),
             ("cursor", "`last_certificate_id` of the previous page"), ("limit", "1 to 100, default 50")]],
     opid="listCertificates", errors=("400", "401", "403"))},
 "/tax/certificates/{certificate_id}": {"get": op("Get certificate (live keys only)", ref("Certificate"), params=[pp("certificate_id", "Certificate ID")], opid="getCertificate", errors=("400", "401", "403", "404"))},
 "/tax/certificates/{certificate_id}/document": {"get": {
    "operationId": "getCertificateDocument", "security": [],
    "summary": "Download a certificate's document through the pre-signed `download_url` (no API key; the signature authorizes). Errors use the flat format unless X-API-Version selects an older one.",
    "parameters": [pp("certificate_id", "Certificate ID"), qp("expires", "From the pre-signed URL"), qp("nonce", "From the pre-signed URL"), qp("signature", "From the pre-signed URL")],
    "responses": {"200": {"description": "The document, with its stored content type", "content": {"*/*": {"schema": {"type": "string", "format": "binary"}}}},
                  "403": {"$ref": "#/components/responses/Error"}, "404": {"$ref": "#/components/responses/Error"}}}},
 "/openapi.json": {"get": {"operationId": "openapi", "summary": "This document", "security": [],
                           "responses": {"200": {"description": "The OpenAPI document", "content": {"application/json": {"schema": {"type": "object"}}}}}}},
}
implemented = routes()
for path in list(paths):
    if path == "/openapi.json":
        continue
    for method in list(paths[path]):
        key = (method.upper(), erase(path))
        if key not in implemented:
            del paths[path][method]
            continue
        since = implemented[key]
        op_ = paths[path][method]
        op_["summary"] = re.sub(r" \(API version [0-9-]+ and later\)$", "", op_["summary"])
        if since and since != "document":
            op_["x-levy-since"] = since
            op_["summary"] += f" (API version {since} and later; earlier versions answer 404 NOT_FOUND)"
    if not paths[path]:
        del paths[path]
missing = {k for k in implemented if not any(erase(q) == k[1] and k[0].lower() in paths[q] for q in paths)}
if missing:
    sys.exit(f"routes of levy-api without a description here: {sorted(missing)}")

doc = {
 "openapi": "3.1.0",
 "info": {"title": "levy tax service", "version": "0.1.0",
          "description": "The tax service interface as levy implements it; the operations listed are exactly those this build answers. Fields marked with a version appear from that `X-API-Version` on; a field sent to a version that does not know it is `UNRECOGNIZED_FIELD`. Amounts are in the currency's smallest unit. Every response carries an `x-request-id` header. Request bodies must be JSON (415 otherwise) and at most 1 MiB by default (413 otherwise), and sent within 30 seconds of the headers by default (408 otherwise). `levy serve` limits each account and mode to a request rate and a number of stored calculations (429 with `Retry-After` beyond them; see its flags).",
          "license": {"name": "MIT OR Apache-2.0", "identifier": "MIT OR Apache-2.0"}},
 "servers": [{"url": "http://127.0.0.1:8787"}],
 "security": [{"bearer": []}],
 "paths": paths,
 "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "description": "`sk_test_…` keys work in test mode, live keys in production mode; the two modes' data are separate."}},
                "responses": {"Error": ERR}, "parameters": {"Version": VERSION_PARAM},
                "schemas": schemas},
}
print(json.dumps(doc, indent=2))
