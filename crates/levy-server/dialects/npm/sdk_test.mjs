// The TaxJar v2 and AvaTax REST v2 request shapes of `levy serve`, driven by the vendors' own
// npm packages (`taxjar`, `avatax`; exact versions in package.json beside this file) unchanged
// but for the base URL: the Node counterpart of ../sdk_test.py. Every tax the SDKs are answered
// is checked against levy's own answer for the same sale (POST /tax/calculations), and the
// Nashville and New York sales against amounts worked by hand.
//
// Run by ../ci.sh, which starts the server and sets LEVY_URL, LEVY_TEST_KEY and LEVY_LIVE_KEY:
// the keys of an account of this test's own (not sdk_test.py's), since it registers the test
// mode in Tennessee and records orders, and expects to find neither before.
//
// The Nashville sale (ZIP 37203, on levy's default table): Tennessee's state rate 7%, Davidson
// County's local rate 2.25% and the Davidson County transit surcharge 0.5% (levy's table,
// data/local/), 9.75% in all; Tennessee taxes delivery charges on taxable goods at the same
// rates (Tenn. Code Ann. 67-6-102, "sales price" includes delivery charges). So:
//   $100.00 of clothing: 7.00 + 2.25 + 0.50 = $9.75;
//   $10.00 of shipping: 0.70 + 0.225 + 0.05 = 0.975, rounded half up to $0.98;
//   in all $10.73 on $110.00.
// Tennessee's single article tax (2.75% on the part of one item's price from $1,600 to $3,200)
// does not reach $100.
//
// The New York City sale (ZIP 10007, New York County, FIPS 36061): the state's 4% (Tax Law
// § 1105(a)), New York City's 4.5% (§ 1107) and the Metropolitan Commuter Transportation
// District's 0.375% (§ 1109), 8.875% in all (Publication 718; levy's data/local/us/NY.toml).
// Clothing and footwear sold for less than $110 an item are exempt from all three (Tax Law
// § 1115(a)(30), New York City by § 1210(a)(1); Tax Bulletin ST-530; docs/taxability/US-NY.md);
// an item of $110 or more is taxed in full. So a $100.00 shirt and a $120.00 coat:
//   the shirt: $0.00;
//   the coat: 4.80 + 5.40 + 0.45 = $10.65 (8.875% of 120, exactly);
//   in all $10.65 on $220.00.
//
// A line of tax included (AvaTax's `taxIncluded`): $109.75 of general merchandise delivered in
// Nashville, 9.75% included, is 109.75 / 1.0975 = $100.00 before tax and $9.75 of tax
// (7.00 + 2.25 + 0.50, as above).

import Taxjar from "taxjar";
import Avatax from "avatax";

const BASE = process.env.LEVY_URL;
const TEST_KEY = process.env.LEVY_TEST_KEY;
const LIVE_KEY = process.env.LEVY_LIVE_KEY;
if (!BASE || !TEST_KEY || !LIVE_KEY) {
  console.error("FAILED: LEVY_URL, LEVY_TEST_KEY and LEVY_LIVE_KEY must be set (ci.sh sets them)");
  process.exit(1);
}

let checks = 0;

// An SDK call that throws where no refusal is expected ends the run as a failure too.
process.on("uncaughtException", (e) => {
  console.error(`FAILED: after ${checks} checks, unexpected error: ${e?.stack ?? e}`);
  if (e?.details) console.error(JSON.stringify(e.details));
  process.exit(1);
});

/** One check: `ok: what`, or `FAILED: what` and exit status 1 (as sdk_test.py, the first failure ends the run). */
function check(cond, what) {
  if (cond !== true) {
    console.error(`FAILED: ${what}`);
    process.exit(1);
  }
  checks += 1;
  console.log(`ok: ${what}`);
}

// --- Exact decimals ----------------------------------------------------------------------
//
// The SDKs hand amounts and rates back as JS numbers, parsed from levy's JSON text, which
// writes each decimal's own digits (10.73, 0.0975, -3.9). String(n) of such a number is the
// shortest decimal text that reads back as the same double (ECMA-262 Number::toString), and for
// a text of at most 15 significant digits that is the text's own digits, trailing zeros aside:
// String() recovers what levy wrote. Every comparison below is of those decimals, as BigInt counts of 10^-9 (every
// amount and rate here has fewer decimals), never of floats: 0.1 + 0.2 is not 0.3 in doubles,
// but units("0.1") + units("0.2") === units("0.3").

const SCALE = 9;

/** A decimal (a JS number from an SDK, or a decimal string written here) as a BigInt count of 10^-SCALE; null when it is not a plain decimal of at most SCALE places (undefined, NaN, 1e-7, ...). */
function units(x) {
  if (typeof x === "number" && !Number.isFinite(x)) return null;
  if (typeof x !== "number" && typeof x !== "string") return null;
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(String(x));
  if (!m || (m[3] ?? "").length > SCALE) return null;
  const v = BigInt(m[2] + (m[3] ?? "").padEnd(SCALE, "0"));
  return m[1] ? -v : v;
}

/** Whether x is the decimal `expected` (a string) exactly. */
function eq(x, expected) {
  const a = units(x);
  const b = units(expected);
  if (b === null) throw new Error(`not a decimal: ${expected}`);
  return a !== null && a === b;
}

/** Whether a dollar amount of an SDK's answer is `cents` (levy's own minor units) exactly. */
function dollarsAreCents(dollars, cents) {
  const a = units(dollars);
  const b = units(cents);
  return a !== null && b !== null && a * 100n === b;
}

/** The sum of decimals, exactly (null when one is not a decimal). */
function sum(xs) {
  let total = 0n;
  for (const x of xs) {
    const u = units(x);
    if (u === null) return null;
    total += u;
  }
  return total;
}

/** Whether `e` is what the avatax package throws of an answer in AvaTax's error shape. */
function avataxError(e) {
  return e instanceof Error && typeof e.code === "string" && typeof e.target === "string" && Array.isArray(e.details);
}

/** The error an SDK call is refused with; null when it is answered. */
async function refusal(call) {
  try {
    await call();
    return null;
  } catch (e) {
    return e;
  }
}

// --- levy's own interface ------------------------------------------------------------------

const TENNESSEE_ORIGIN = { address_province: "TN", address_postal_code: "37203", address_country: "US" };

/** levy's own interface: POST or GET `path` with `key`, its JSON answer (a non-200 is thrown). */
async function levy(method, path, key, body) {
  const r = await fetch(BASE + path, {
    method,
    headers: {
      Authorization: "Bearer " + key,
      "X-API-Version": "2026-03-01",
      "Content-Type": "application/json",
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${text}`);
  return JSON.parse(text);
}

/** levy's own answer for a sale shipped from Nashville: POST /tax/calculations; lines are [cents, category]. */
function levyNative(key, address, lines, { taxIncluded = false } = {}) {
  return levy("POST", "/tax/calculations", key, {
    customer: { address },
    order_details: {
      customer_currency_code: "USD",
      tax_included_in_amount: taxIncluded,
      line_items: lines.map(([cents, category]) => ({ amount: cents, quantity: 1, product_category: category })),
    },
    origin_address: TENNESSEE_ORIGIN,
  });
}

const NASHVILLE = {
  address_line_1: "200 Broadway",
  address_city: "Nashville",
  address_province: "TN",
  address_postal_code: "37203",
  address_country: "US",
};
const LOS_ANGELES = {
  address_line_1: "200 N Spring St",
  address_city: "Los Angeles",
  address_province: "CA",
  address_postal_code: "90012",
  address_country: "US",
};
const NEW_YORK = {
  address_line_1: "260 Broadway",
  address_city: "New York",
  address_province: "NY",
  address_postal_code: "10007",
  address_country: "US",
};

// --- TaxJar (npm taxjar) -----------------------------------------------------------------

// The package adds `/v2/` to apiUrl. Its answers are the JSON bodies as sent, one key each
// (`tax`, `rate`, `categories`, `regions`, `order`, `refund`); a refusal is thrown as
// Taxjar.Error with `error` (the reason phrase), `detail` and `status`. The package always sends
// `Authorization: Bearer <apiKey>` (its `headers` option cannot replace it), so TaxJar's
// `Token token="..."` scheme is left to sdk_test.py, whose SDK can send it.
const tj = new Taxjar({ apiKey: TEST_KEY, apiUrl: BASE });
const live = new Taxjar({ apiKey: LIVE_KEY, apiUrl: BASE });

function taxjarOrder(to, shipping, items) {
  return {
    from_country: "US",
    from_zip: "37203",
    from_state: "TN",
    to_country: "US",
    to_zip: to.address_postal_code,
    to_state: to.address_province,
    to_city: to.address_city,
    to_street: to.address_line_1,
    shipping,
    line_items: items,
  };
}

let { tax } = await tj.taxForOrder(
  taxjarOrder(NASHVILLE, 10, [{ id: "1", quantity: 1, unit_price: 100, product_tax_code: "20010" }]),
);
let native = await levyNative(TEST_KEY, NASHVILLE, [[10000, "CLOTHING"], [1000, "SHIPPING"]]);
check(eq(tax.amount_to_collect, "10.73"), "TaxJar Nashville: $10.73 on $110.00, worked by hand");
check(
  dollarsAreCents(tax.amount_to_collect, native.total_tax_amount),
  "TaxJar Nashville: amount_to_collect is levy's own total_tax_amount",
);
check(eq(tax.rate, "0.0975"), "TaxJar Nashville: rate 9.75%");
check(tax.has_nexus === true && tax.freight_taxable === true, "TaxJar Nashville: has_nexus, freight_taxable");
check(eq(tax.taxable_amount, "110"), "TaxJar Nashville: taxable_amount 110");
let item = tax.breakdown.line_items[0];
check(
  eq(item.state_amount, "7") && eq(item.county_amount, "2.25") && eq(item.special_district_amount, "0.5"),
  "TaxJar Nashville: the item's state 7.00, county 2.25, district 0.50",
);
check(eq(item.tax_collectable, "9.75"), "TaxJar Nashville: the item's tax 9.75");
check(eq(tax.breakdown.shipping.tax_collectable, "0.98"), "TaxJar Nashville: shipping tax 0.98");
check(tax.jurisdictions.county === "DAVIDSON", "TaxJar Nashville: county DAVIDSON");

// Quantity, unit price and discount: 3 x $20.00 - $5.00 = $55.00 of groceries, no shipping.
({ tax } = await tj.taxForOrder(
  taxjarOrder(NASHVILLE, 0, [{ id: "g", quantity: 3, unit_price: 20, discount: 5, product_tax_code: "40030" }]),
));
native = await levyNative(TEST_KEY, NASHVILLE, [[5500, "GROCERIES"], [0, "SHIPPING"]]);
check(
  dollarsAreCents(tax.amount_to_collect, native.total_tax_amount),
  `TaxJar groceries in Nashville: levy's own answer (${native.total_tax_amount} cents)`,
);

// Los Angeles: the same sale as levy's own.
({ tax } = await tj.taxForOrder(taxjarOrder(LOS_ANGELES, 0, [{ id: "1", quantity: 2, unit_price: 50 }])));
native = await levyNative(TEST_KEY, LOS_ANGELES, [[10000, "GENERAL_MERCHANDISE"], [0, "SHIPPING"]]);
check(
  dollarsAreCents(tax.amount_to_collect, native.total_tax_amount),
  `TaxJar Los Angeles: levy's own answer (${native.total_tax_amount} cents)`,
);

// New York City: the $100.00 shirt exempt, the $120.00 coat taxed in full (worked above).
({ tax } = await tj.taxForOrder(
  taxjarOrder(NEW_YORK, 0, [
    { id: "shirt", quantity: 1, unit_price: 100, product_tax_code: "20010" },
    { id: "coat", quantity: 1, unit_price: 120, product_tax_code: "20010" },
  ]),
));
native = await levyNative(TEST_KEY, NEW_YORK, [[10000, "CLOTHING"], [12000, "CLOTHING"], [0, "SHIPPING"]]);
check(eq(tax.amount_to_collect, "10.65"), "TaxJar New York City clothing: $10.65 on $220.00, worked by hand");
check(
  dollarsAreCents(tax.amount_to_collect, native.total_tax_amount),
  "TaxJar New York City clothing: levy's own total_tax_amount",
);
const byId = Object.fromEntries(tax.breakdown.line_items.map((l) => [l.id, l]));
check(
  eq(byId.shirt?.tax_collectable, "0") && eq(byId.shirt?.state_amount, "0"),
  "TaxJar New York City: the $100.00 shirt (under $110) owes no state, city or MCTD tax",
);
check(
  eq(byId.coat?.state_amount, "4.8") && eq(byId.coat?.county_amount, "5.4")
    && eq(byId.coat?.special_district_amount, "0.45") && eq(byId.coat?.tax_collectable, "10.65"),
  "TaxJar New York City: the $120.00 coat, state 4.80, New York City 5.40, MCTD 0.45",
);

// An unknown product tax code: general merchandise, and said so.
({ tax } = await tj.taxForOrder(
  taxjarOrder(NASHVILLE, 0, [{ id: "x", quantity: 1, unit_price: 100, product_tax_code: "12345" }]),
));
check(eq(tax.amount_to_collect, "9.75"), "TaxJar unknown code: taxed as general merchandise");
check((tax.levy_messages ?? []).some((m) => m.includes("12345")), "TaxJar unknown code: a message says so");

const { rate } = await tj.ratesForLocation("37203", { state: "TN", city: "Nashville" });
check(eq(rate.combined_rate, "0.0975"), "TaxJar rates 37203: combined 9.75%");
check(
  eq(rate.state_rate, "0.07") && eq(rate.county_rate, "0.0225") && eq(rate.combined_district_rate, "0.005"),
  "TaxJar rates 37203: state 7%, county 2.25%, district 0.5%",
);

const { categories } = await tj.categories();
const codes = new Set(categories.map((c) => c.product_tax_code));
check(
  ["20010", "40030", "31000", "30070"].every((c) => codes.has(c)),
  "TaxJar categories: 20010, 40030, 31000, 30070",
);

// Nexus regions are levy's registrations: none, then Tennessee.
check((await tj.nexusRegions()).regions.length === 0, "TaxJar nexus regions: none before a registration");
await levy("POST", "/tax/registrations", TEST_KEY, { country: "US", region: "TN" });
const { regions } = await tj.nexusRegions();
check(
  JSON.stringify(regions.map((g) => [g.country_code, g.region_code, g.region])) === '[["US","TN","Tennessee"]]',
  "TaxJar nexus regions: Tennessee once registered",
);
// Registered in Tennessee only: a sale into California is not collected.
({ tax } = await tj.taxForOrder(taxjarOrder(LOS_ANGELES, 0, [{ id: "1", quantity: 1, unit_price: 100 }])));
check(
  tax.has_nexus === false && eq(tax.amount_to_collect, "0"),
  "TaxJar: no nexus in California (registered in Tennessee only), nothing to collect",
);
// Test and live modes are apart: the live mode has no registration.
check((await live.nexusRegions()).regions.length === 0, "TaxJar live key: the test mode's registration is not the live mode's");

// Errors, thrown by the package as Taxjar.Error from TaxJar's error shape
// ({"error": reason, "detail", "status"}).
let e = await refusal(() => new Taxjar({ apiKey: "sk_test_not_a_key", apiUrl: BASE }).categories());
check(
  e instanceof Taxjar.Error && e.status === 401 && e.error === "Unauthorized",
  "TaxJar: a bad key is 401 Unauthorized in TaxJar's error shape",
);
e = await refusal(() => tj.taxForOrder({ to_country: "US", to_zip: "37203", to_state: "TN" }));
check(
  e instanceof Taxjar.Error && e.status === 400 && e.error === "Bad Request" && e.detail.includes("shipping"),
  "TaxJar: a missing shipping is 400 Bad Request naming it",
);

// Recording: an order is a levy transaction of levy's own tax, a refund a levy refund of it,
// taxed as of its transaction_date. The live key: its mode has no registration, so it collects
// everywhere on any date (the test mode's Tennessee registration starts now, after the order's
// day). The Nashville sale of $100.00 of clothing and $10.00 of shipping owes $10.73 (worked
// above). The ids are this test's own (npm-...), apart from sdk_test.py's.
const recorded = {
  ...taxjarOrder(NASHVILLE, 10, [{ id: "1", quantity: 1, unit_price: 100, product_tax_code: "20010" }]),
  transaction_id: "npm-order-1",
  transaction_date: "2026/12/01",
  amount: 110, // with the shipping, as TaxJar's orders write it
  sales_tax: 10.73,
};
const { order } = await live.createOrder(recorded);
check(
  order.transaction_id === "npm-order-1" && eq(order.sales_tax, "10.73"),
  "TaxJar createOrder: recorded with levy's $10.73",
);
check(
  (await live.createOrder(recorded)).order.levy_transaction_id === order.levy_transaction_id,
  "TaxJar createOrder sent again: the same transaction, not a second one",
);
const tx = await levy("GET", "/tax/transactions/" + order.levy_transaction_id, LIVE_KEY);
check(tx.reference_order_id === "npm-order-1", "TaxJar order: a levy transaction of its transaction_id");
check(eq((await live.showOrder("npm-order-1")).order.sales_tax, "10.73"), "TaxJar showOrder: $10.73");
const said = (await live.createOrder({ ...recorded, transaction_id: "npm-order-2", sales_tax: 5 })).order;
check(
  eq(said.sales_tax, "10.73") && (said.levy_messages ?? []).some((m) => m.includes("sales_tax 5")),
  "TaxJar createOrder with another sales_tax: levy's recorded, and said so",
);
const { refund } = await live.createRefund({
  transaction_id: "npm-refund-1",
  transaction_reference_id: "npm-order-1",
  transaction_date: "2026/12/05",
  to_country: "US",
  to_zip: "37203",
  to_state: "TN",
  amount: -40,
  shipping: 0,
  sales_tax: -3.9,
  line_items: [{ id: "1", quantity: 1, unit_price: 40 }],
});
// 40 / 100 of the line's $9.75 is $3.90, exactly.
check(eq(refund.sales_tax, "-3.9"), "TaxJar createRefund: $40 of the $100 line takes back 40% of its $9.75, $3.90");
check(eq((await live.showRefund("npm-refund-1")).refund.amount, "-40"), "TaxJar showRefund: -$40.00");
check((await live.deleteRefund("npm-refund-1")).refund.levy_reversed_at != null, "TaxJar deleteRefund: reversed");
// An order updated: the shirt at $50.00, $5.86 as the AvaTax adjustment below works it.
const updated = (await live.updateOrder({
  ...recorded,
  amount: 60,
  sales_tax: 5.86,
  line_items: [{ id: "1", quantity: 1, unit_price: 50, product_tax_code: "20010" }],
})).order;
check(
  eq(updated.sales_tax, "5.86") && updated.levy_transaction_id !== order.levy_transaction_id
    && eq((await live.showOrder("npm-order-1")).order.sales_tax, "5.86"),
  "TaxJar updateOrder: a new version of the order, $5.86, read back",
);
check((await live.deleteOrder("npm-order-2")).order.levy_deleted_at != null, "TaxJar deleteOrder: deleted");
e = await refusal(() => live.showOrder("npm-order-2"));
check(e instanceof Taxjar.Error && e.status === 404, "TaxJar showOrder of a deleted order: 404");

// --- AvaTax (npm avatax) -----------------------------------------------------------------

// The package takes an http(s) URL as its environment (the base URL; it adds /api/v2/...).
// Its answers are the JSON bodies (a TransactionModel, ...), not the HTTP response: there is no
// status to check. A body with `error` is thrown as an error carrying AvaTax's error shape:
// `code`, `target`, `details` (the package's AvalaraError, compiled to ES5, is a plain Error at
// run time, its constructor answering the object Error.apply makes: it is told by its fields).
// The live key: its mode has no registration (the test mode's, above, is registered in
// Tennessee only since now), so it collects everywhere, on any date.
function avataxClient() {
  return new Avatax({ appName: "levy-ci", appVersion: "1.0", machineName: "ci", environment: BASE, timeout: 10000 });
}
const av = avataxClient().withSecurity({ accountId: "12345", licenseKey: LIVE_KEY });

const ping = await av.ping();
check(ping.authenticated === true, "AvaTax ping: authenticated");
check(ping.authenticationType === "AccountIdLicenseKey", "AvaTax ping: by account id and license key (HTTP Basic)");
// Without withSecurity the package sends `Authorization: undefined` (its header object holds
// undefined, which fetch writes as the text): no credential levy reads.
check((await avataxClient().ping()).authenticated === false, "AvaTax ping without credentials: not authenticated");

function avataxDocument(address, lines) {
  return {
    type: "SalesOrder",
    companyCode: "DEFAULT",
    date: "2026-12-01",
    customerCode: "ABC",
    currencyCode: "USD",
    commit: false,
    addresses: {
      shipFrom: { line1: "200 Broadway", city: "Nashville", region: "TN", country: "US", postalCode: "37203" },
      shipTo: {
        line1: address.address_line_1,
        city: address.address_city,
        region: address.address_province,
        country: "US",
        postalCode: address.address_postal_code,
      },
    },
    lines,
  };
}

let t = await av.createTransaction({
  model: avataxDocument(NASHVILLE, [
    { number: "1", quantity: 1, amount: 100, taxCode: "PC040100", itemCode: "SHIRT" },
    { number: "2", quantity: 1, amount: 10, taxCode: "FR020100", itemCode: "FREIGHT" },
  ]),
});
native = await levyNative(LIVE_KEY, NASHVILLE, [[10000, "CLOTHING"], [1000, "SHIPPING"]]);
check(t.status === "Temporary" && t.type === "SalesOrder", "AvaTax createTransaction SalesOrder: Temporary");
check(eq(t.totalTax, "10.73"), "AvaTax Nashville: totalTax $10.73, worked by hand");
check(dollarsAreCents(t.totalTax, native.total_tax_amount), "AvaTax Nashville: levy's own total");
check(
  eq(t.totalAmount, "110") && eq(t.totalTaxable, "110") && eq(t.totalExempt, "0"),
  "AvaTax Nashville: totalAmount 110, totalTaxable 110, totalExempt 0",
);
const details = Object.fromEntries(
  t.lines[0].details.filter((d) => !eq(d.tax, "0")).map((d) => [d.jurisType, d]),
);
check(
  details.STA?.jurisName === "TENNESSEE" && eq(details.STA?.rate, "0.07") && eq(details.STA?.tax, "7"),
  "AvaTax Nashville: the state detail, 7% and $7.00",
);
check(
  details.CTY?.jurisCode === "47037" && eq(details.CTY?.tax, "2.25"),
  "AvaTax Nashville: Davidson County (FIPS 47037), $2.25",
);
check(eq(details.STJ?.tax, "0.5"), "AvaTax Nashville: the transit surcharge, $0.50");
check(eq(t.lines[1].tax, "0.98"), "AvaTax Nashville: the freight line's tax, $0.98");
check(t.messages.some((m) => m.summary === "Levy-Coverage FULL"), "AvaTax Nashville: messages carry levy's coverage");
check(
  sum(t.summary.map((s) => s.tax)) === units("10.73"),
  "AvaTax Nashville: summary in whole cents, 9.75 + 0.98 (the freight's 0.70 + 0.23 + 0.05) = 10.73",
);

// Los Angeles, as levy's own.
t = await av.createTransaction({ model: avataxDocument(LOS_ANGELES, [{ number: "1", quantity: 2, amount: 100 }]) });
native = await levyNative(LIVE_KEY, LOS_ANGELES, [[10000, "GENERAL_MERCHANDISE"]]);
check(
  dollarsAreCents(t.totalTax, native.total_tax_amount),
  `AvaTax Los Angeles: levy's own answer (${native.total_tax_amount} cents)`,
);

// New York City: the $100.00 shirt exempt, the $120.00 coat taxed in full (worked above).
t = await av.createTransaction({
  model: avataxDocument(NEW_YORK, [
    { number: "1", amount: 100, taxCode: "PC040100", itemCode: "SHIRT" },
    { number: "2", amount: 120, taxCode: "PC040100", itemCode: "COAT" },
  ]),
});
native = await levyNative(LIVE_KEY, NEW_YORK, [[10000, "CLOTHING"], [12000, "CLOTHING"]]);
check(eq(t.totalTax, "10.65"), "AvaTax New York City clothing: totalTax $10.65 on $220.00, worked by hand");
check(dollarsAreCents(t.totalTax, native.total_tax_amount), "AvaTax New York City clothing: levy's own total");
check(
  eq(t.lines[0].tax, "0") && eq(t.lines[0].exemptAmount, "100") && t.lines[0].isItemTaxable === false,
  "AvaTax New York City: the $100.00 shirt (under $110) is exempt, $0.00",
);
check(
  eq(t.lines[1].tax, "10.65") && eq(t.totalExempt, "100") && eq(t.totalTaxable, "120"),
  "AvaTax New York City: the $120.00 coat taxed, totalTaxable 120, totalExempt 100",
);

// A line of tax included: $109.75 in Nashville is $100.00 and $9.75 of tax (worked above).
t = await av.createTransaction({
  model: avataxDocument(NASHVILLE, [{ number: "1", amount: 109.75, taxCode: "P0000000", taxIncluded: true }]),
});
native = await levyNative(LIVE_KEY, NASHVILLE, [[10975, "GENERAL_MERCHANDISE"]], { taxIncluded: true });
check(
  eq(t.totalTax, "9.75") && eq(t.totalAmount, "100") && t.lines[0].taxIncluded === true,
  "AvaTax taxIncluded: $109.75 in Nashville is $100.00 and $9.75 of tax",
);
check(dollarsAreCents(t.totalTax, native.total_tax_amount), "AvaTax taxIncluded: levy's own total (tax_included_in_amount)");

const rates = await av.taxRatesByPostalCode({ country: "US", postalCode: "37203" });
check(eq(rates.totalRate, "0.0975"), "AvaTax taxRatesByPostalCode 37203: 9.75%");
check(
  rates.rates.length === 3
    && eq(rates.rates[0].rate, "0.07") && rates.rates[0].type === "State"
    && eq(rates.rates[1].rate, "0.0225") && rates.rates[1].type === "County"
    && eq(rates.rates[2].rate, "0.005") && rates.rates[2].type === "Special",
  "AvaTax taxRatesByPostalCode 37203: state 7%, county 2.25%, special 0.5%",
);

// ZIP 90201 is shared by Bell and Bell Gardens, of different district taxes: the city named
// decides. CDTFA's list of 2026-01-01 (data/local/ca-cdtfa-1-1-26.csv): Bell 9.75%, Bell
// Gardens 10.5%.
for (const [city, line1, expected] of [
  ["Bell", "6330 Pine Ave", "0.0975"],
  ["Bell Gardens", "7100 Garfield Ave", "0.105"],
]) {
  const at = await av.taxRatesByAddress({ line1, city, region: "CA", postalCode: "90201", country: "US" });
  check(eq(at.totalRate, expected), `AvaTax taxRatesByAddress ${city} 90201: ${expected}`);
}

const taxCodes = new Set((await av.listTaxCodes({})).value.map((c) => c.taxCode));
check(
  ["P0000000", "PC040100", "PF050000"].every((c) => taxCodes.has(c)),
  "AvaTax listTaxCodes: P0000000, PC040100, PF050000",
);

// Errors, thrown by the package from AvaTax's error shape
// ({"error": {"code", "message", "target", "details"}}).
const bad = avataxClient().withSecurity({ accountId: "12345", licenseKey: "sk_test_not_a_key" });
e = await refusal(() => bad.createTransaction({ model: avataxDocument(NASHVILLE, [{ number: "1", amount: 100 }]) }));
check(
  avataxError(e) && e.code === "AuthenticationException" && e.target === "HttpRequest" && e.details?.[0]?.number === 401,
  "AvaTax: a bad key is AuthenticationException (401) in AvaTax's error shape",
);
// Nashville's ZIP 37203 said to be in California.
const misplaced = avataxDocument({ ...NASHVILLE, address_province: "CA" }, [{ number: "1", amount: 100 }]);
e = await refusal(() => av.createTransaction({ model: misplaced }));
check(
  avataxError(e) && e.code === "InvalidAddress" && e.target === "IncorrectData"
    && e.details?.[0]?.number === 400 && e.details[0].refersTo === "addresses.shipTo.postalCode",
  "AvaTax: ZIP 37203 in CA is InvalidAddress (400) in AvaTax's error shape, naming shipTo.postalCode",
);

// Recording: a committed SalesInvoice is a levy transaction of levy's own tax ($100.00 of
// clothing and $10.00 of freight in Nashville: $10.73, worked above).
const lines = [
  { number: "1", amount: 100, taxCode: "PC040100" },
  { number: "2", amount: 10, taxCode: "FR020100" },
];
const uncommitted = await av.createTransaction({
  model: { ...avataxDocument(NASHVILLE, lines), type: "SalesInvoice", code: "NPM-INV-1" },
});
check(
  uncommitted.type === "SalesInvoice" && uncommitted.status === "Temporary" && eq(uncommitted.totalTax, "10.73")
    && uncommitted.messages[0].summary.includes("levy keeps no uncommitted document"),
  "AvaTax: an uncommitted SalesInvoice is calculated ($10.73), kept nowhere, and says so",
);
const invoiceModel = { ...avataxDocument(NASHVILLE, lines), type: "SalesInvoice", code: "NPM-INV-1", commit: true };
const invoice = await av.createTransaction({ model: invoiceModel });
check(
  invoice.status === "Committed" && invoice.type === "SalesInvoice" && eq(invoice.totalTax, "10.73"),
  "AvaTax createTransaction SalesInvoice commit: recorded, Committed, $10.73",
);
check(
  (await av.createTransaction({ model: invoiceModel })).levyTransactionId === invoice.levyTransactionId,
  "AvaTax createTransaction sent again: the same transaction, not a second one",
);
const invoiceTx = await levy("GET", "/tax/transactions/" + invoice.levyTransactionId, LIVE_KEY);
check(invoiceTx.reference_order_id === "NPM-INV-1", "AvaTax invoice: a levy transaction of its code");
const got = await av.getTransactionByCode({ companyCode: "DEFAULT", transactionCode: "NPM-INV-1" });
check(got.status === "Committed" && eq(got.totalTax, "10.73"), "AvaTax getTransactionByCode: Committed, $10.73");
const returned = await av.refundTransaction({
  companyCode: "DEFAULT",
  transactionCode: "NPM-INV-1",
  model: { refundTransactionCode: "NPM-RET-1", refundDate: "2026-12-03", refundType: "Partial", refundLines: ["2"] },
});
check(
  returned.type === "ReturnInvoice" && eq(returned.totalTax, "-0.98"),
  "AvaTax refundTransaction Partial of line 2: the freight's $0.98 back",
);
await av.createTransaction({ model: { ...invoiceModel, code: "NPM-INV-2" } });
const voided = await av.voidTransaction({ companyCode: "DEFAULT", transactionCode: "NPM-INV-2", model: { code: "DocVoided" } });
check(voided.status === "Cancelled", "AvaTax voidTransaction: Cancelled");
check(
  (await av.getTransactionByCode({ companyCode: "DEFAULT", transactionCode: "NPM-INV-2" })).status === "Cancelled",
  "AvaTax: a voided invoice reads back Cancelled",
);
// A return voided (its refund reversed), then the invoice adjusted: the shirt at $50.00 owes
// 350 + 112.5 + 25 = 487.5 cents, rounded half up to 488, with the freight's 98: $5.86.
const retVoided = await av.voidTransaction({ companyCode: "DEFAULT", transactionCode: "NPM-RET-1", model: { code: "DocVoided" } });
check(retVoided.type === "ReturnInvoice" && retVoided.status === "Cancelled", "AvaTax voidTransaction of a return: Cancelled");
const fifty = [{ ...lines[0], amount: 50 }, lines[1]];
const adjusted = await av.adjustTransaction({
  companyCode: "DEFAULT",
  transactionCode: "NPM-INV-1",
  model: { adjustmentReason: "PriceAdjusted", adjustmentDescription: "coupon", newTransaction: { ...invoiceModel, lines: fifty } },
});
check(
  adjusted.adjustmentReason === "PriceAdjusted" && eq(adjusted.totalTax, "5.86")
    && adjusted.levyTransactionId !== invoice.levyTransactionId,
  "AvaTax adjustTransaction: a new version of the invoice, $5.86",
);
check(
  (await av.getTransactionByCode({ companyCode: "DEFAULT", transactionCode: "NPM-INV-1" })).levyTransactionId
    === adjusted.levyTransactionId,
  "AvaTax: the adjusted code reads back its new version",
);
const committed = await av.commitTransaction({ companyCode: "DEFAULT", transactionCode: "NPM-INV-1", model: { commit: true } });
check(committed.status === "Committed", "AvaTax commitTransaction of a recorded invoice: Committed, as it stands");
e = await refusal(() => av.uncommitTransaction({ companyCode: "DEFAULT", transactionCode: "NPM-INV-1" }));
check(avataxError(e) && e.details?.[0]?.number === 400, "AvaTax uncommitTransaction: refused (400)");
const made = await av.createOrAdjustTransaction({ model: { createTransactionModel: { ...invoiceModel, code: "NPM-INV-3" } } });
check(eq(made.totalTax, "10.73"), "AvaTax createOrAdjustTransaction of a new code: created, $10.73");
const redone = await av.createOrAdjustTransaction({
  model: { createTransactionModel: { ...invoiceModel, code: "NPM-INV-3", lines: fifty } },
});
check(redone.adjustmentReason === "Other" && eq(redone.totalTax, "5.86"),
  "AvaTax createOrAdjustTransaction of a recorded code: adjusted, $5.86");
e = await refusal(() => av.getTransactionByCode({ companyCode: "DEFAULT", transactionCode: "NO-SUCH-DOC" }));
check(
  avataxError(e) && e.code === "EntityNotFoundError" && e.details?.[0]?.number === 404,
  "AvaTax: an unknown document is EntityNotFoundError (404)",
);

console.log(`${checks} checks passed`);
