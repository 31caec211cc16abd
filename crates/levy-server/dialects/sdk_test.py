"""The TaxJar v2 and AvaTax REST v2 request shapes of `levy serve`, driven by the vendors' own
Python SDKs (PyPI `taxjar`, `avalara`) unchanged but for the base URL. Every tax the SDKs are
answered is checked against levy's own answer for the same sale (POST /tax/calculations),
and the Nashville sale against amounts worked by hand.

Run by ci.sh beside this file, which starts the server and sets LEVY_URL, LEVY_TEST_KEY and
LEVY_LIVE_KEY.

The Nashville sale (ZIP 37203, on levy's default table): Tennessee's state rate 7%, Davidson
County's local rate 2.25% and the Davidson County transit surcharge 0.5% (levy's table,
data/local/), 9.75% in all; Tennessee taxes delivery charges on taxable goods at the same
rates (Tenn. Code Ann. 67-6-102, "sales price" includes delivery charges). So:
  $100.00 of clothing: 7.00 + 2.25 + 0.50 = $9.75;
  $10.00 of shipping: 0.70 + 0.225 + 0.05 = 0.975, rounded half up to $0.98;
  in all $10.73 on $110.00.
Tennessee's single article tax (2.75% on the part of one item's price from $1,600 to $3,200)
does not reach $100.
"""

import os
import sys
from decimal import Decimal

import requests
import taxjar
from taxjar.exceptions import TaxJarResponseError
from avalara import AvataxClient

BASE = os.environ["LEVY_URL"]
TEST_KEY = os.environ["LEVY_TEST_KEY"]
LIVE_KEY = os.environ["LEVY_LIVE_KEY"]

checks = 0


def check(cond, what):
    global checks
    if not cond:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)
    checks += 1
    print(f"ok: {what}")


def dollars(x):
    """An SDK's float as the decimal it was written as (the JSON text's digits)."""
    return Decimal(str(x))


TENNESSEE_ORIGIN = {"address_province": "TN", "address_postal_code": "37203", "address_country": "US"}


def levy_native(key, address, lines, origin=TENNESSEE_ORIGIN):
    """levy's own answer for a sale shipped from Nashville: POST /tax/calculations; lines
    are (cents, category)."""
    body = {
        "customer": {"address": address},
        "order_details": {
            "customer_currency_code": "USD",
            "line_items": [
                {"amount": cents, "quantity": 1, "product_category": category}
                for cents, category in lines
            ],
        },
    }
    body["origin_address"] = origin
    r = requests.post(
        BASE + "/tax/calculations",
        json=body,
        headers={"Authorization": "Bearer " + key, "X-API-Version": "2026-03-01"},
        timeout=10,
    )
    assert r.status_code == 200, r.text
    return r.json()


NASHVILLE = {
    "address_line_1": "200 Broadway",
    "address_city": "Nashville",
    "address_province": "TN",
    "address_postal_code": "37203",
    "address_country": "US",
}
LOS_ANGELES = {
    "address_line_1": "200 N Spring St",
    "address_city": "Los Angeles",
    "address_province": "CA",
    "address_postal_code": "90012",
    "address_country": "US",
}

# --- TaxJar -----------------------------------------------------------------------------

tj = taxjar.Client(api_key=TEST_KEY, api_url=BASE)


def taxjar_order(to, shipping, items):
    return {
        "from_country": "US",
        "from_zip": "37203",
        "from_state": "TN",
        "to_country": "US",
        "to_zip": to["address_postal_code"],
        "to_state": to["address_province"],
        "to_city": to["address_city"],
        "to_street": to["address_line_1"],
        "shipping": shipping,
        "line_items": items,
    }


tax = tj.tax_for_order(
    taxjar_order(
        NASHVILLE,
        10,
        [{"id": "1", "quantity": 1, "unit_price": 100, "product_tax_code": "20010"}],
    )
)
native = levy_native(TEST_KEY, NASHVILLE, [(10000, "CLOTHING"), (1000, "SHIPPING")])
check(dollars(tax.amount_to_collect) == Decimal("10.73"), "TaxJar Nashville: $10.73 on $110.00, worked by hand")
check(
    dollars(tax.amount_to_collect) * 100 == Decimal(native["total_tax_amount"]),
    "TaxJar Nashville: amount_to_collect is levy's own total_tax_amount",
)
check(dollars(tax.rate) == Decimal("0.0975"), "TaxJar Nashville: rate 9.75%")
check(tax.has_nexus is True and tax.freight_taxable is True, "TaxJar Nashville: has_nexus, freight_taxable")
check(dollars(tax.taxable_amount) == Decimal("110"), "TaxJar Nashville: taxable_amount 110")
item = tax.breakdown.line_items[0]
check(
    (dollars(item.state_amount), dollars(item.county_amount), dollars(item.special_district_amount))
    == (Decimal("7"), Decimal("2.25"), Decimal("0.5")),
    "TaxJar Nashville: the item's state 7.00, county 2.25, district 0.50",
)
check(dollars(item.tax_collectable) == Decimal("9.75"), "TaxJar Nashville: the item's tax 9.75")
check(dollars(tax.breakdown.shipping.tax_collectable) == Decimal("0.98"), "TaxJar Nashville: shipping tax 0.98")
check(tax.jurisdictions.county == "DAVIDSON", "TaxJar Nashville: county DAVIDSON")

# Quantity, unit price and discount: 3 x $20.00 - $5.00 = $55.00 of groceries, no shipping.
tax = tj.tax_for_order(
    taxjar_order(
        NASHVILLE,
        0,
        [{"id": "g", "quantity": 3, "unit_price": 20, "discount": 5, "product_tax_code": "40030"}],
    )
)
native = levy_native(TEST_KEY, NASHVILLE, [(5500, "GROCERIES"), (0, "SHIPPING")])
check(
    dollars(tax.amount_to_collect) * 100 == Decimal(native["total_tax_amount"]),
    "TaxJar groceries in Nashville: levy's own answer (%s cents)" % native["total_tax_amount"],
)

# Los Angeles: the same sale as levy's own.
tax = tj.tax_for_order(
    taxjar_order(LOS_ANGELES, 0, [{"id": "1", "quantity": 2, "unit_price": 50}])
)
native = levy_native(
    TEST_KEY,
    LOS_ANGELES,
    [(10000, "GENERAL_MERCHANDISE"), (0, "SHIPPING")],
)
check(
    dollars(tax.amount_to_collect) * 100 == Decimal(native["total_tax_amount"]),
    "TaxJar Los Angeles: levy's own answer (%s cents)" % native["total_tax_amount"],
)

# An unknown product tax code: general merchandise, and said so.
tax = tj.tax_for_order(
    taxjar_order(NASHVILLE, 0, [{"id": "x", "quantity": 1, "unit_price": 100, "product_tax_code": "12345"}])
)
check(dollars(tax.amount_to_collect) == Decimal("9.75"), "TaxJar unknown code: taxed as general merchandise")
check(any("12345" in m for m in tax.levy_messages), "TaxJar unknown code: a message says so")

rate = tj.rates_for_location("37203", {"state": "TN", "city": "Nashville"})
check(dollars(rate.combined_rate) == Decimal("0.0975"), "TaxJar rates 37203: combined 9.75%")
check(
    (dollars(rate.state_rate), dollars(rate.county_rate), dollars(rate.combined_district_rate))
    == (Decimal("0.07"), Decimal("0.0225"), Decimal("0.005")),
    "TaxJar rates 37203: state 7%, county 2.25%, district 0.5%",
)

categories = tj.categories()
codes = {c.product_tax_code for c in categories}
check({"20010", "40030", "31000", "30070"} <= codes, "TaxJar categories: 20010, 40030, 31000, 30070")

# Nexus regions are levy's registrations: none, then Tennessee.
check(list(tj.nexus_regions()) == [], "TaxJar nexus regions: none before a registration")
r = requests.post(
    BASE + "/tax/registrations",
    json={"country": "US", "region": "TN"},
    headers={"Authorization": "Bearer " + TEST_KEY, "X-API-Version": "2026-03-01"},
    timeout=10,
)
assert r.status_code == 200, r.text
regions = list(tj.nexus_regions())
check(
    [(g.country_code, g.region_code, g.region) for g in regions] == [("US", "TN", "Tennessee")],
    "TaxJar nexus regions: Tennessee once registered",
)
# Registered in Tennessee only: a sale into California is not collected.
tax = tj.tax_for_order(taxjar_order(LOS_ANGELES, 0, [{"id": "1", "quantity": 1, "unit_price": 100}]))
check(
    tax.has_nexus is False and dollars(tax.amount_to_collect) == 0,
    "TaxJar: no nexus in California (registered in Tennessee only), nothing to collect",
)
# Test and live modes are apart: the live mode has no registration.
live = taxjar.Client(api_key=LIVE_KEY, api_url=BASE)
check(list(live.nexus_regions()) == [], "TaxJar live key: the test mode's registration is not the live mode's")

# The Token scheme, as TaxJar's reference allows.
token = taxjar.Client(
    api_key=TEST_KEY, api_url=BASE, options={"headers": {"Authorization": 'Token token="%s"' % TEST_KEY}}
)
check({c.product_tax_code for c in token.categories()} == codes, 'TaxJar: Authorization: Token token="..."')

try:
    taxjar.Client(api_key="sk_test_not_a_key", api_url=BASE).categories()
    check(False, "TaxJar: a bad key is refused")
except TaxJarResponseError as e:
    check(
        e.full_response["status_code"] == 401 and str(e).startswith("401 Unauthorized"),
        "TaxJar: a bad key is 401 Unauthorized in TaxJar's error shape",
    )
try:
    tj.tax_for_order({"to_country": "US", "to_zip": "37203", "to_state": "TN"})
    check(False, "TaxJar: an order without shipping is refused")
except TaxJarResponseError as e:
    check(e.full_response["status_code"] == 400 and "shipping" in e.full_response["detail"],
          "TaxJar: a missing shipping is 400 naming it")

# Recording: an order is a levy transaction of levy's own tax, a refund a levy refund of
# it, taxed as of its transaction_date. The live key: its mode has no registration, so it
# collects everywhere on any date (the test mode's Tennessee registration starts now, after
# the order's day). The Nashville sale of $100.00 of clothing and $10.00 of shipping owes
# $10.73 (worked by hand in crates/levy-api/tests/dialects.rs).
recorded = dict(
    taxjar_order(NASHVILLE, 10, [{"id": "1", "quantity": 1, "unit_price": 100, "product_tax_code": "20010"}]),
    transaction_id="sdk-order-1",
    transaction_date="2026/12/01",
    amount=110,  # with the shipping, as TaxJar's orders write it
    sales_tax=10.73,
)
order = live.create_order(recorded)
check(order.transaction_id == "sdk-order-1" and dollars(order.sales_tax) == Decimal("10.73"),
      "TaxJar create_order: recorded with levy's $10.73")
check(live.create_order(recorded).levy_transaction_id == order.levy_transaction_id,
      "TaxJar create_order sent again: the same transaction, not a second one")
r = requests.get(
    BASE + "/tax/transactions/" + order.levy_transaction_id,
    headers={"Authorization": "Bearer " + LIVE_KEY, "X-API-Version": "2026-03-01"},
    timeout=10,
)
check(r.status_code == 200 and r.json()["reference_order_id"] == "sdk-order-1",
      "TaxJar order: a levy transaction of its transaction_id")
check(dollars(live.show_order("sdk-order-1").sales_tax) == Decimal("10.73"), "TaxJar show_order")
said = live.create_order(dict(recorded, transaction_id="sdk-order-2", sales_tax=5))
check(dollars(said.sales_tax) == Decimal("10.73") and any("sales_tax 5" in m for m in said.levy_messages),
      "TaxJar create_order with another sales_tax: levy's recorded, and said so")
refund = live.create_refund({
    "transaction_id": "sdk-refund-1", "transaction_reference_id": "sdk-order-1",
    "transaction_date": "2026/12/05", "to_country": "US", "to_zip": "37203", "to_state": "TN",
    "amount": -40, "shipping": 0, "sales_tax": -3.9,
    "line_items": [{"id": "1", "quantity": 1, "unit_price": 40}],
})
check(dollars(refund.sales_tax) == Decimal("-3.9"),
      "TaxJar create_refund: $40 of the $100 line takes back 40% of its $9.75, $3.90")
check(dollars(live.show_refund("sdk-refund-1").amount) == Decimal("-40"), "TaxJar show_refund")
check(live.delete_refund("sdk-refund-1").levy_reversed_at is not None, "TaxJar delete_refund: reversed")
# An order updated: the shirt at $50.00, $5.86 as the AvaTax adjustment below works it; a
# new version of the order under its transaction_id.
updated = live.update_order("sdk-order-1", dict(
    recorded, amount=60, sales_tax=5.86,
    line_items=[{"id": "1", "quantity": 1, "unit_price": 50, "product_tax_code": "20010"}],
))
check(dollars(updated.sales_tax) == Decimal("5.86") and updated.levy_transaction_id != order.levy_transaction_id
      and dollars(live.show_order("sdk-order-1").sales_tax) == Decimal("5.86"),
      "TaxJar update_order: a new version of the order, $5.86, read back")
check(live.delete_order("sdk-order-2").levy_deleted_at is not None, "TaxJar delete_order: deleted")
try:
    live.show_order("sdk-order-2")
    check(False, "TaxJar: a deleted order is not found")
except TaxJarResponseError as e:
    check(e.full_response["status_code"] == 404, "TaxJar show_order of a deleted order: 404")

# --- AvaTax -----------------------------------------------------------------------------

# The SDK takes an http(s) URL as its environment. The live key: its mode has no
# registration (the test mode's, above, is registered in Tennessee only since now), so it
# collects everywhere, on any date.
av = AvataxClient("levy-ci", "1.0", "ci", BASE)
av.add_credentials("12345", LIVE_KEY)

ping = av.ping()
check(ping.status_code == 200 and ping.json()["authenticated"] is True, "AvaTax ping: authenticated")
check("x-correlation-id" in ping.headers, "AvaTax ping: x-correlation-id sent (the SDK logs it)")
anonymous = AvataxClient("levy-ci", "1.0", "ci", BASE)
check(anonymous.ping().json()["authenticated"] is False, "AvaTax ping without credentials: not authenticated")


def avatax_document(address, lines):
    return {
        "type": "SalesOrder",
        "companyCode": "DEFAULT",
        "date": "2026-12-01",
        "customerCode": "ABC",
        "currencyCode": "USD",
        "commit": False,
        "addresses": {
            "shipFrom": {"line1": "200 Broadway", "city": "Nashville", "region": "TN", "country": "US", "postalCode": "37203"},
            "shipTo": {
                "line1": address["address_line_1"],
                "city": address["address_city"],
                "region": address["address_province"],
                "country": "US",
                "postalCode": address["address_postal_code"],
            },
        },
        "lines": lines,
    }


created = av.create_transaction(
    avatax_document(
        NASHVILLE,
        [
            {"number": "1", "quantity": 1, "amount": 100, "taxCode": "PC040100", "itemCode": "SHIRT"},
            {"number": "2", "quantity": 1, "amount": 10, "taxCode": "FR020100", "itemCode": "FREIGHT"},
        ],
    )
)
check(created.status_code == 200, "AvaTax create: 200 (%s)" % created.text[:200])
t = created.json()
native = levy_native(LIVE_KEY, NASHVILLE, [(10000, "CLOTHING"), (1000, "SHIPPING")])
check(dollars(t["totalTax"]) == Decimal("10.73"), "AvaTax Nashville: totalTax $10.73, worked by hand")
check(dollars(t["totalTax"]) * 100 == Decimal(native["total_tax_amount"]), "AvaTax Nashville: levy's own total")
check(
    (dollars(t["totalAmount"]), dollars(t["totalTaxable"]), dollars(t["totalExempt"]))
    == (Decimal("110"), Decimal("110"), Decimal("0")),
    "AvaTax Nashville: totalAmount 110, totalTaxable 110, totalExempt 0",
)
details = {d["jurisType"]: d for d in t["lines"][0]["details"] if Decimal(str(d["tax"])) != 0}
check(
    (details["STA"]["jurisName"], dollars(details["STA"]["rate"]), dollars(details["STA"]["tax"])) == ("TENNESSEE", Decimal("0.07"), Decimal("7")),
    "AvaTax Nashville: the state detail, 7% and $7.00",
)
check(
    (details["CTY"]["jurisCode"], dollars(details["CTY"]["tax"])) == ("47037", Decimal("2.25")),
    "AvaTax Nashville: Davidson County (FIPS 47037), $2.25",
)
check(dollars(details["STJ"]["tax"]) == Decimal("0.5"), "AvaTax Nashville: the transit surcharge, $0.50")
check(any(m["summary"] == "Levy-Coverage FULL" for m in t["messages"]), "AvaTax Nashville: messages carry levy's coverage")
check(sum(dollars(s["tax"]) for s in t["summary"]) == Decimal("10.73"),
      "AvaTax Nashville: summary in whole cents, 9.75 + 0.98 (the freight's 0.70 + 0.23 + 0.05) = 10.73")

# Los Angeles, as levy's own.
created = av.create_transaction(avatax_document(LOS_ANGELES, [{"number": "1", "quantity": 2, "amount": 100}]))
native = levy_native(LIVE_KEY, LOS_ANGELES, [(10000, "GENERAL_MERCHANDISE")])
check(
    dollars(created.json()["totalTax"]) * 100 == Decimal(native["total_tax_amount"]),
    "AvaTax Los Angeles: levy's own answer (%s cents)" % native["total_tax_amount"],
)

rates = av.tax_rates_by_postal_code({"country": "US", "postalCode": "37203"}).json()
check(dollars(rates["totalRate"]) == Decimal("0.0975"), "AvaTax taxrates/bypostalcode 37203: 9.75%")
check(
    [(dollars(r["rate"]), r["type"]) for r in rates["rates"]]
    == [(Decimal("0.07"), "State"), (Decimal("0.0225"), "County"), (Decimal("0.005"), "Special")],
    "AvaTax taxrates/bypostalcode 37203: state 7%, county 2.25%, special 0.5%",
)

# ZIP 90201 is shared by Bell and Bell Gardens, of different district taxes: the city named
# decides. CDTFA's list of 2026-01-01 (../shared/data/ca-cdtfa-2026-01): Bell 9.75%, Bell
# Gardens 10.5%.
for city, line1, expected in [("Bell", "6330 Pine Ave", "0.0975"), ("Bell Gardens", "7100 Garfield Ave", "0.105")]:
    at = av.tax_rates_by_address(
        {"line1": line1, "city": city, "region": "CA", "postalCode": "90201", "country": "US"}
    ).json()
    check(dollars(at["totalRate"]) == Decimal(expected), f"AvaTax taxrates/byaddress {city} 90201: {expected}")

taxcodes = av.list_tax_codes()
check(
    {"P0000000", "PC040100", "PF050000"} <= {c["taxCode"] for c in taxcodes.json()["value"]},
    "AvaTax definitions/taxcodes: P0000000, PC040100, PF050000",
)

bad = AvataxClient("levy-ci", "1.0", "ci", BASE).add_credentials("12345", "sk_test_not_a_key")
refused = bad.create_transaction(avatax_document(NASHVILLE, [{"number": "1", "amount": 100}]))
check(
    refused.status_code == 401 and refused.json()["error"]["code"] == "AuthenticationException",
    "AvaTax: a bad key is 401 AuthenticationException in AvaTax's error shape",
)
# Recording: a committed SalesInvoice is a levy transaction of levy's own tax ($100.00 of
# clothing and $10.00 of freight in Nashville: $10.73, worked by hand in
# crates/levy-api/tests/dialects.rs).
lines = [{"number": "1", "amount": 100, "taxCode": "PC040100"}, {"number": "2", "amount": 10, "taxCode": "FR020100"}]
uncommitted = av.create_transaction(dict(avatax_document(NASHVILLE, lines), type="SalesInvoice", code="SDK-INV-1"))
check(
    uncommitted.status_code == 200
    and (uncommitted.json()["type"], uncommitted.json()["status"]) == ("SalesInvoice", "Temporary")
    and dollars(uncommitted.json()["totalTax"]) == Decimal("10.73")
    and "levy keeps no uncommitted document" in uncommitted.json()["messages"][0]["summary"],
    "AvaTax: an uncommitted SalesInvoice is calculated ($10.73), kept nowhere, and says so",
)
check(av.get_transaction_by_code("DEFAULT", "SDK-INV-1").status_code == 404,
      "AvaTax: the uncommitted invoice's code holds nothing")
invoice_model = dict(avatax_document(NASHVILLE, lines), type="SalesInvoice", code="SDK-INV-1", commit=True)
invoice = av.create_transaction(invoice_model)
check(
    invoice.status_code == 200
    and invoice.json()["status"] == "Committed"
    and dollars(invoice.json()["totalTax"]) == Decimal("10.73"),
    "AvaTax create_transaction SalesInvoice commit: recorded, Committed, $10.73",
)
check(
    av.create_transaction(invoice_model).json()["levyTransactionId"] == invoice.json()["levyTransactionId"],
    "AvaTax create_transaction sent again: the same transaction, not a second one",
)
r = requests.get(
    BASE + "/tax/transactions/" + invoice.json()["levyTransactionId"],
    headers={"Authorization": "Bearer " + LIVE_KEY, "X-API-Version": "2026-03-01"},
    timeout=10,
)
check(r.status_code == 200 and r.json()["reference_order_id"] == "SDK-INV-1", "AvaTax invoice: a levy transaction of its code")
got = av.get_transaction_by_code("DEFAULT", "SDK-INV-1")
check(got.status_code == 200 and dollars(got.json()["totalTax"]) == Decimal("10.73"), "AvaTax get_transaction_by_code")
refund = av.refund_transaction(
    "DEFAULT",
    "SDK-INV-1",
    {"refundTransactionCode": "SDK-RET-1", "refundDate": "2026-12-03", "refundType": "Partial", "refundLines": ["2"]},
)
check(
    refund.status_code == 200
    and refund.json()["type"] == "ReturnInvoice"
    and dollars(refund.json()["totalTax"]) == Decimal("-0.98"),
    "AvaTax refund_transaction Partial of line 2: the freight's $0.98 back",
)
av.create_transaction(dict(invoice_model, code="SDK-INV-2"))
voided = av.void_transaction("DEFAULT", "SDK-INV-2", {"code": "DocVoided"})
check(voided.status_code == 200 and voided.json()["status"] == "Cancelled", "AvaTax void_transaction: Cancelled")
check(av.get_transaction_by_code("DEFAULT", "SDK-INV-2").json()["status"] == "Cancelled",
      "AvaTax: a voided invoice reads back Cancelled")
# A return voided: its refund reversed, so its invoice may be adjusted.
voided = av.void_transaction("DEFAULT", "SDK-RET-1", {"code": "DocVoided"})
check(voided.status_code == 200 and (voided.json()["type"], voided.json()["status"]) == ("ReturnInvoice", "Cancelled"),
      "AvaTax void_transaction of a return: Cancelled")
# Adjusting: the shirt at $50.00 owes 350 + 112.5 + 25 = 487.5 cents, rounded half up to
# 488, with the freight's 98: $5.86. The document's code reads back the new version.
fifty = [dict(lines[0], amount=50), lines[1]]
adjusted = av.adjust_transaction(
    "DEFAULT",
    "SDK-INV-1",
    {"adjustmentReason": "PriceAdjusted", "adjustmentDescription": "coupon",
     "newTransaction": dict(invoice_model, lines=fifty)},
)
check(
    adjusted.status_code == 200
    and adjusted.json()["adjustmentReason"] == "PriceAdjusted"
    and dollars(adjusted.json()["totalTax"]) == Decimal("5.86")
    and adjusted.json()["levyTransactionId"] != invoice.json()["levyTransactionId"],
    "AvaTax adjust_transaction: a new version of the invoice, $5.86",
)
av.refund_transaction("DEFAULT", "SDK-INV-1", {"refundTransactionCode": "SDK-RET-2", "refundType": "Full"})
refused = av.adjust_transaction(
    "DEFAULT", "SDK-INV-1", {"adjustmentReason": "Other", "newTransaction": invoice_model}
)
check(refused.status_code == 409 and refused.json()["error"]["details"][0]["levyCode"] == "TRANSACTION_REFUNDED",
      "AvaTax adjust_transaction of an invoice with a return standing: 409 TRANSACTION_REFUNDED")
check(av.get_transaction_by_code("DEFAULT", "SDK-INV-1").json()["levyTransactionId"]
      == adjusted.json()["levyTransactionId"], "AvaTax: the adjusted code reads back its new version")
committed = av.commit_transaction("DEFAULT", "SDK-INV-1", {"commit": True})
check(committed.status_code == 200 and committed.json()["status"] == "Committed",
      "AvaTax commit_transaction of a recorded invoice: Committed, as it stands")
uncommit = av.uncommit_transaction("DEFAULT", "SDK-INV-1")
check(uncommit.status_code == 400, "AvaTax uncommit_transaction: refused (levy keeps no uncommitted document)")
made = av.create_or_adjust_transaction({"createTransactionModel": dict(invoice_model, code="SDK-INV-3")})
check(made.status_code == 200 and dollars(made.json()["totalTax"]) == Decimal("10.73"),
      "AvaTax create_or_adjust_transaction of a new code: created, $10.73")
again = av.create_or_adjust_transaction(
    {"createTransactionModel": dict(invoice_model, code="SDK-INV-3", lines=fifty)}
)
check(again.status_code == 200 and again.json()["adjustmentReason"] == "Other"
      and dollars(again.json()["totalTax"]) == Decimal("5.86"),
      "AvaTax create_or_adjust_transaction of a recorded code: adjusted, $5.86")
missing = av.get_transaction_by_code("DEFAULT", "NO-SUCH-DOC")
check(missing.status_code == 404 and missing.json()["error"]["code"] == "EntityNotFoundError",
      "AvaTax: an unknown document is 404 EntityNotFoundError")

print(f"{checks} checks passed")
