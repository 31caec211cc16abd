"""Two commerce plugins' HTTP call sequences replayed against a real `levy serve`: Kill Bill's
AvaTax plugin (the AvaTax REST v2 shape, /api/v2/) and solidus_taxjar (the TaxJar v2 shape,
/v2/). Each request is sent as the plugin sends it (method, path, query, headers, and a JSON
body written as its serializer writes it), and each answer is checked for the fields the
plugin reads, with the values it needs: status codes, the echoed codes and ids, and the tax,
against amounts worked by hand (Nashville) or against levy's own answer for the same sale
(POST /tax/calculations).

The sequences were read from the plugins' public source; nothing of it is copied here, the
calls are described in our words, with the file each comes from:

  Kill Bill AvaTax plugin, github.com/killbill/killbill-avatax-plugin at
  08a56cc65fbe01736b1b7931731b88f32a9e59ed (0.9.1-SNAPSHOT, Kill Bill 0.24; the newest
  snapshot read), and its HTTP client, github.com/killbill/killbill-plugin-framework-java
  src/main/java/org/killbill/billing/plugin/util/http/HttpClient.java at 14752c2 (what the
  plugin of that date runs on; unchanged since in what it puts on the wire).

  solidus_taxjar v1.0.0, github.com/SuperGoodSoft/solidus_taxjar at
  ef698c7674b6b869ea335e0400f37e61fccf4dba, over its TaxJar client, taxjar-ruby
  (github.com/taxjar/taxjar-ruby at 5f8bbdb96c0c23dbcade807be1b66da276a1c5b4), and the VCR
  cassettes of solidus_taxjar's own specs (spec/fixtures/cassettes/...), which hold the
  requests it made to TaxJar byte for byte.

Run as sdk_test.py is (ci.sh beside this file starts the server): LEVY_URL and LEVY_TEST_KEY.
The script registers the account (the key's mode) in Tennessee and California through levy's
own POST /tax/registrations, active from a week ago, because solidus_taxjar asks for tax
only in a state its nexus regions list. sdk_test.py expects that mode to have no
registration when it starts: run this script after it, or on its own server.

Unlike sdk_test.py, a failed check does not stop the run: every step is tried, each FAILED
line says what was answered, and the exit status is 1 when any check failed.

The Nashville sale (ZIP 37203, levy's default table; hand-worked in sdk_test.py): Tennessee
7%, Davidson County 2.25%, the Davidson County transit surcharge 0.5%, 9.75% in all, on
goods and on delivery charges:
  $100.00 -> 7.00 + 2.25 + 0.50 = $9.75;
  2 x $20.00 = $40.00 -> 2.80 + 0.90 + 0.20 = $3.90;
  $10.00 of shipping -> 0.70 + 0.225 + 0.05 = 0.975, rounded half up to $0.98;
  a refund of $40.00 of the $100.00 line takes back 40% of its $9.75, $3.90.
The Los Angeles sale (ZIP 90012) is compared with levy's own answer for it.
"""

import base64
import datetime
import json
import os
import random
import sys
import urllib.parse
import uuid
from decimal import ROUND_HALF_UP, Decimal

import requests

BASE = os.environ["LEVY_URL"].rstrip("/")
KEY = os.environ["LEVY_TEST_KEY"]

passed = 0
failed = []


def check(cond, what, response=None):
    """One check; a failure is recorded (with what was answered) and the run goes on."""
    global passed
    if cond:
        passed += 1
        print(f"ok: {what}", flush=True)
        return True
    said = ""
    if response is not None:
        said = f" [answered {response.status_code}: {response.text[:500]}]"
    failed.append(what)
    print(f"FAILED: {what}{said}", file=sys.stderr, flush=True)
    return False


def section(title):
    print(f"=== {title}", flush=True)


def answer(r):
    """An answer's JSON object, or {} when it has none."""
    try:
        v = r.json()
    except ValueError:
        return {}
    return v if isinstance(v, dict) else {}


def D(x):
    """A JSON number or numeric string as the decimal it was written as; None stays None."""
    if x is None or isinstance(x, bool):
        return None
    try:
        return Decimal(str(x))
    except ArithmeticError:
        return None


def cents(d):
    return d.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def levy_native(address, lines):
    """levy's own answer (POST /tax/calculations) for a sale to `address` with no origin,
    as neither plugin sends one (API version 2024-09-01: from 2025-05-12 levy's own
    interface requires origin_address); lines are (cents, category). Its total tax, in
    cents. The account is registered wherever these sales go, so the dialects' automatic
    collection and this version's collect alike."""
    body = {
        "customer": {"address": address},
        "order_details": {
            "customer_currency_code": "USD",
            "line_items": [
                {"amount": amount, "quantity": 1, "product_category": category}
                for amount, category in lines
            ],
        },
    }
    r = requests.post(
        BASE + "/tax/calculations",
        json=body,
        headers={"Authorization": "Bearer " + KEY, "X-API-Version": "2024-09-01"},
        timeout=10,
    )
    if r.status_code != 200:
        print(f"FAILED: levy's own calculation for the comparison [{r.status_code}: {r.text[:500]}]",
              file=sys.stderr)
        sys.exit(1)
    return int(r.json()["total_tax_amount"])


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

NOW = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
TODAY = NOW.date().isoformat()
RUN = "%09d" % random.randrange(10**9)  # order numbers of this run (reruns on one ledger)

# --- Setup, through levy's own interface ---------------------------------------------------
section("setup: levy registrations in TN and CA (levy's own POST /tax/registrations)")
for region in ("TN", "CA"):
    r = requests.post(
        BASE + "/tax/registrations",
        json={"country": "US", "region": region, "active_from": int(NOW.timestamp()) - 7 * 86400},
        headers={"Authorization": "Bearer " + KEY, "X-API-Version": "2026-03-01"},
        timeout=10,
    )
    check(r.status_code == 200, f"setup: registered in {region}", r)

LA_10000 = levy_native(LOS_ANGELES, [(10000, "GENERAL_MERCHANDISE")])
LA_4999 = levy_native(LOS_ANGELES, [(4999, "GENERAL_MERCHANDISE")])
print(f"levy's own answers for Los Angeles 90012: $100.00 -> {LA_10000} cents, $49.99 -> {LA_4999} cents")

# =============================================================================================
# (a) Kill Bill's AvaTax plugin
# =============================================================================================
#
# What the plugin puts on the wire (killbill-plugin-framework-java HttpClient.java,
# getBuilderWithHeaderAndQuery and doCall): the base URL is the `...avatax.url` setting,
# e.g. https://sandbox-rest.avatax.com/api/v2 (README.md), so paths below are under /api/v2.
# Every request carries `User-Agent: KillBill/1.0`, `Authorization: Basic
# base64(accountId:licenseKey)` (sent up front, not on a challenge) and, from AvaTaxClient /
# TaxRatesClient, `X-Avalara-Client: Kill Bill; 2.0; killbill-avatax; 2.0; NA`. Nothing
# else: the POST bodies go out through java.net.http's BodyPublishers.ofString, which sets
# no Content-Type, and no Accept is sent. Query parameters are percent-encoded (RFC 3986
# unreserved characters kept, a space as %20: UTF8UrlEncoder.java), in the order the plugin
# puts them in its map.
#
# Bodies are Jackson's (client/ClientUtils.java createObjectMapper): null fields left out,
# fields in the order the model classes declare them (client/model/*.java), dates as
# yyyy-MM-dd, BigDecimal amounts as written with their scale. Kill Bill keeps invoice-item
# amounts as numeric(15,9), so a $100 item goes out as 100.000000000.
#
# The invoice flows (api/AvaTaxTaxCalculatorBase.java compute, api/AvaTaxTaxCalculator.java
# toTaxRequest / toLine / toAddress, api/AvaTaxInvoicePluginApi.java onSuccessCall):
#   * every invoice Kill Bill builds, dry run or not, is one POST transactions/create;
#     a dry run is a SalesOrder with commit false; a real invoice a SalesInvoice, with
#     commit true only when the `commitDocuments` setting is on AND the invoice is
#     COMMITTED (a DRAFT invoice, or any invoice with the setting off, its default, goes out
#     as an uncommitted SalesInvoice);
#   * the document `code` is "<invoice id>_<first 12 characters of a random UUID>",
#     `description` the invoice id, `date` today, `customerCode` the account's external key
#     (or its id), `addresses` a shipTo only (the account's address), each line `number`
#     the invoice item id (read back from the answer's lineNumber as a UUID), `itemCode` the
#     usage, phase or plan name, `quantity` 1, `amount` the item's amount, `ref1`/`ref2` the
#     item and invoice ids, `taxCode` only when one is configured for the product;
#   * the answer's `code` is stored as the document's code for later commit and void; each
#     line's `details[]` becomes one tax invoice item of `tax` (the line's `tax` when it has
#     no detail), named by `taxName`, zero taxes left out;
#   * an item adjustment (or repair) of an invoice already sent is a ReturnInvoice (a
#     ReturnOrder for a dry run), `referenceCode` the stored code of the original
#     invoice, each returned line the original item's `number` with the negative adjusted
#     amount and a `taxOverride` {type TaxDate, reason, taxDate = the original invoice's
#     date}, so that the return is taxed at the original rates;
#   * committing a DRAFT invoice posts companies/{companyCode}/transactions/{code}/commit
#     {"commit": true}, and voiding an invoice .../{code}/void {"code": "DocVoided"}, for
#     every code stored for the invoice;
#   * the healthcheck (core/AvalaraHealthcheck.java) is GET utilities/ping, reading
#     `authenticated`; the admin servlet (core/AvaTaxTransactionsServlet.java) GETs
#     companies/{companyCode}/transactions/{code};
#   * the TaxRates mode (api/TaxRatesTaxCalculator.java, client/TaxRatesClient.java) GETs
#     taxrates/byaddress?line1&city&region&postalCode&country when the account has a full
#     address, else taxrates/bypostalcode?postalCode&country, and taxes each item
#     rate by rate: round-half-up to the cent of rate x amount for each of `rates[]` (or of
#     `totalRate` when there are none), one invoice item named by the rate's `name`.
# The plugin never calls createoradjust or adjust: a change to a sent invoice is a return.

section("Kill Bill AvaTax plugin")

KB_ACCOUNT_ID = "1100012345"  # the plugin's accountId setting: levy does not check it
KB_HEADERS = {
    "User-Agent": "KillBill/1.0",
    "Authorization": "Basic " + base64.b64encode(f"{KB_ACCOUNT_ID}:{KEY}".encode()).decode(),
    "X-Avalara-Client": "Kill Bill; 2.0; killbill-avatax; 2.0; NA",
}
kb_http = requests.Session()
# java.net.http sends no Accept, Accept-Encoding or Connection header: none here either
# (urllib3 still adds Accept-Encoding: identity, which asks for what Java gets unasked).
kb_http.headers.clear()


def jackson(value):
    """JSON text as the plugin's ObjectMapper writes it: compact, null fields left out,
    Decimal written with its scale (a BigDecimal), fields in the order given."""
    if isinstance(value, dict):
        return "{" + ",".join(
            json.dumps(k) + ":" + jackson(v) for k, v in value.items() if v is not None
        ) + "}"
    if isinstance(value, list):
        return "[" + ",".join(jackson(v) for v in value) + "]"
    if isinstance(value, Decimal):
        return str(value)
    return json.dumps(value)


def kb_query(params):
    return "&".join(
        urllib.parse.quote(k, safe="-._~") + "=" + urllib.parse.quote(v, safe="-._~")
        for k, v in params
    )


def kb_call(label, method, path, body=None, query=None):
    """A request as the plugin sends it. A body refused for its missing Content-Type is a
    failure, and is sent again with one, so that the rest of the step is still checked."""
    url = BASE + "/api/v2" + path + ("?" + kb_query(query) if query else "")
    data = jackson(body).encode() if body is not None else None
    r = kb_http.request(method, url, data=data, headers=KB_HEADERS, timeout=10)
    if body is not None:
        taken = check(r.status_code != 415, f"{label}: body taken without a Content-Type, as the plugin sends it", r)
        if not taken:
            r = kb_http.request(
                method, url, data=data, headers=dict(KB_HEADERS, **{"Content-Type": "application/json"}), timeout=10
            )
            print(f"   ({label}: sent again with Content-Type: application/json, to check the rest)", flush=True)
    return r


def kb_code(invoice_id):
    return "%s_%s" % (invoice_id, str(uuid.uuid4())[:12])


def kb_ship_to(a):
    # AddressLocationInfo: locationCode, line1, line2, line3, city, region, postalCode,
    # country; an account without address2 leaves line2 out.
    return {
        "line1": a["address_line_1"],
        "city": a["address_city"],
        "region": a["address_province"],
        "postalCode": a["address_postal_code"],
        "country": a["address_country"],
    }


def kb_line(item, amount=None, adjustment_reason=None, original_invoice_date=None):
    # LineItemModel's order: number, itemCode, quantity, amount, taxCode, customerUsageType,
    # description, discounted, taxIncluded, ref1, ref2, businessIdentificationNo,
    # taxOverride, addresses.
    line = {
        "number": item["id"],
        "itemCode": item["phase"],
        "quantity": Decimal("1"),
        "amount": item["amount"] if amount is None else amount,
        "taxCode": item.get("tax_code"),
        "description": item["description"],
        "ref1": item["id"],
        "ref2": item["invoice_id"],
    }
    if adjustment_reason is not None:
        line["taxOverride"] = {"type": "TaxDate", "reason": adjustment_reason, "taxDate": original_invoice_date}
    return line


def kb_document(doc_type, commit, invoice_id, customer, address, lines, reference_code=None):
    # CreateTransactionModel's order: date, customerCode, addresses, lines, code, type,
    # companyCode, commit, entityUseCode, ..., referenceCode, posLaneCode, currencyCode,
    # description.
    return {
        "date": TODAY,
        "customerCode": customer,
        "addresses": {"shipTo": kb_ship_to(address)},
        "lines": lines,
        "code": kb_code(invoice_id),
        "type": doc_type,
        "companyCode": "DEFAULT",
        "commit": commit,
        "referenceCode": reference_code,
        "currencyCode": "USD",
        "description": invoice_id,
    }


def kb_tax_items(t):
    """The tax invoice items AvaTaxTaxCalculator makes of an answer: per line, one per
    detail of non-zero `tax` (the line's `tax` when it has no detail). Also checks what it
    parses: each lineNumber a UUID (UUID.fromString)."""
    items = []
    for line in t.get("lines") or []:
        uuid.UUID(str(line.get("lineNumber")))
        details = line.get("details") or []
        if details:
            items += [(line["lineNumber"], D(d.get("tax")), d.get("taxName") or "Tax") for d in details]
        else:
            items.append((line["lineNumber"], D(line.get("tax")), "Tax"))
    return [i for i in items if i[1] != 0]


def kb_reads(label, r, sent):
    """The fields AvaTaxDao.addResponse and the calculator read of a TransactionModel;
    returns the tax items it would book."""
    t = answer(r)
    if not check(r.status_code == 200, f"{label}: 200", r):
        return []
    check(t.get("code") == sent["code"], f"{label}: code {sent['code']} answered (stored for commit and void)", r)
    check(str(t.get("date", ""))[:10] == sent["date"], f"{label}: date {sent['date']}", r)
    check(
        all(is_number(t.get(f)) for f in
            ("totalAmount", "totalDiscount", "totalExempt", "totalTaxable", "totalTax", "totalTaxCalculated")),
        f"{label}: totalAmount, totalDiscount, totalExempt, totalTaxable, totalTax, totalTaxCalculated numbers",
        r,
    )
    numbers = [line["number"] for line in sent["lines"]]
    try:
        items = kb_tax_items(t)
        answered = [line.get("lineNumber") for line in t.get("lines") or []]
        check(sorted(answered) == sorted(numbers), f"{label}: a line per line sent, lineNumber its UUID", r)
    except (ValueError, KeyError, TypeError):
        check(False, f"{label}: each lines[].lineNumber is the UUID sent", r)
        items = []
    check(all(i[1] is not None for i in items), f"{label}: every details[].tax a number", r)
    return [i for i in items if i[1] is not None]


def booked(items):
    return sum((i[1] for i in items), Decimal(0))


ping = kb_call("ping", "GET", "/utilities/ping")
check(ping.status_code == 200 and answer(ping).get("authenticated") is True,
      "ping (AvalaraHealthcheck): authenticated true", ping)

# --- A Nashville account, a $100.00 monthly subscription ---------------------------------
NASH_INVOICE = str(uuid.uuid4())
NASH_ITEM = {
    "id": str(uuid.uuid4()),
    "invoice_id": NASH_INVOICE,
    "phase": "standard-monthly-evergreen",
    "description": "standard-monthly-evergreen",
    "amount": Decimal("100.000000000"),
}
NASH_CUSTOMER = "kb-nashville-" + RUN

# 1. The invoice previewed (a dry run): a SalesOrder, not committed.
doc = kb_document("SalesOrder", False, NASH_INVOICE, NASH_CUSTOMER, NASHVILLE, [kb_line(NASH_ITEM)])
r = kb_call("dry-run SalesOrder", "POST", "/transactions/create", doc)
items = kb_reads("dry-run SalesOrder Nashville", r, doc)
check(sorted(i[1] for i in items) == [Decimal("0.5"), Decimal("2.25"), Decimal("7")],
      "dry-run SalesOrder Nashville: tax items 7.00, 2.25 and 0.50 (state, county, transit)", r)
check(booked(items) == Decimal("9.75"), "dry-run SalesOrder Nashville: $9.75 on $100.00, worked by hand", r)

# 2. The invoice generated, COMMITTED, commitDocuments on: a committed SalesInvoice.
invoice = kb_document("SalesInvoice", True, NASH_INVOICE, NASH_CUSTOMER, NASHVILLE, [kb_line(NASH_ITEM)])
r = kb_call("SalesInvoice commit", "POST", "/transactions/create", invoice)
items = kb_reads("SalesInvoice commit:true Nashville", r, invoice)
check(answer(r).get("status") == "Committed", "SalesInvoice commit:true Nashville: status Committed", r)
check(booked(items) == Decimal("9.75"), "SalesInvoice commit:true Nashville: $9.75 booked", r)
invoice_code = answer(r).get("code") or invoice["code"]

# 3. The admin servlet shows it.
r = kb_call("get by code", "GET", f"/companies/DEFAULT/transactions/{invoice_code}")
check(r.status_code == 200 and answer(r).get("code") == invoice_code
      and D(answer(r).get("totalTax")) == Decimal("9.75"),
      "GET companies/DEFAULT/transactions/{code}: the invoice, totalTax 9.75", r)

# 4. An item adjustment of $40.00 on it: a committed ReturnInvoice of the item, at the
#    original invoice's date, referring to the invoice's code.
ret = kb_document(
    "ReturnInvoice", True, NASH_INVOICE, NASH_CUSTOMER, NASHVILLE,
    [kb_line(NASH_ITEM, amount=Decimal("-40.000000000"), adjustment_reason="Invoice item adjustment",
             original_invoice_date=TODAY)],
    reference_code=invoice_code,
)
r = kb_call("ReturnInvoice", "POST", "/transactions/create", ret)
items = kb_reads("ReturnInvoice (item adjustment -$40.00, taxOverride TaxDate)", r, ret)
check(D(answer(r).get("totalTax")) == Decimal("-3.9") and booked(items) == Decimal("-3.90"),
      "ReturnInvoice: 40% of the line's $9.75 back, -$3.90 booked", r)
return_code = answer(r).get("code") if r.status_code == 200 else None

# 5. The invoice voided: every code stored for it.
for label, code in (("the invoice", invoice_code), ("its return", return_code)):
    if code is None:
        check(False, f"void {label}: not stored (its create failed), nothing to void")
        continue
    r = kb_call(f"void {label}", "POST", f"/companies/DEFAULT/transactions/{code}/void", {"code": "DocVoided"})
    check(r.status_code == 200 and answer(r).get("status") == "Cancelled",
          f"POST .../{{code}}/void DocVoided, {label}: 200, Cancelled", r)

# --- A Los Angeles account, a $49.99 subscription with a configured tax code ---------------
LA_INVOICE = str(uuid.uuid4())
LA_ITEM = {
    "id": str(uuid.uuid4()),
    "invoice_id": LA_INVOICE,
    "phase": "basic-monthly-evergreen",
    "description": "basic-monthly-evergreen",
    "amount": Decimal("49.990000000"),
    "tax_code": "P0000000",  # taxCode_<item id>, from the product's tax code (AvaTaxTaxCodesServlet)
}
LA_CUSTOMER = "kb-los-angeles-" + RUN

doc = kb_document("SalesOrder", False, LA_INVOICE, LA_CUSTOMER, LOS_ANGELES, [kb_line(LA_ITEM)])
r = kb_call("dry-run SalesOrder LA", "POST", "/transactions/create", doc)
items = kb_reads("dry-run SalesOrder Los Angeles", r, doc)
check(D(answer(r).get("totalTax")) is not None and D(answer(r).get("totalTax")) * 100 == LA_4999,
      f"dry-run SalesOrder Los Angeles: totalTax is levy's own ({LA_4999} cents)", r)
check(booked(items) * 100 == LA_4999,
      f"dry-run SalesOrder Los Angeles: the tax items Kill Bill books (its details' tax, "
      f"{booked(items)}) add up to levy's own {LA_4999} cents", r)

# An uncommitted SalesInvoice: what the plugin sends for every invoice with commitDocuments
# off (its default), and for a DRAFT invoice with it on. levy keeps no uncommitted document:
# the invoice is calculated as a SalesOrder is (the tax Kill Bill books), answered Temporary,
# and its first message says nothing was saved. So the DRAFT flow's later commit of the code
# finds nothing, and says why (levy's documented answer; the plugin logs it): with
# commitDocuments on, a DRAFT invoice is not recorded in levy's ledger.
draft = kb_document("SalesInvoice", False, LA_INVOICE, LA_CUSTOMER, LOS_ANGELES, [kb_line(LA_ITEM)])
r = kb_call("SalesInvoice commit:false", "POST", "/transactions/create", draft)
if kb_reads("SalesInvoice commit:false Los Angeles (a DRAFT invoice; any invoice with "
            "commitDocuments off, its default)", r, draft):
    t = answer(r)
    check(t.get("type") == "SalesInvoice" and t.get("status") == "Temporary"
          and D(t.get("totalTax")) is not None and D(t.get("totalTax")) * 100 == LA_4999,
          f"SalesInvoice commit:false Los Angeles: calculated, Temporary, levy's own {LA_4999} cents", r)
    first = (t.get("messages") or [{}])[0].get("summary") or ""
    check("levy keeps no uncommitted document" in first,
          "SalesInvoice commit:false: its first message says nothing was saved", r)
draft_code = answer(r).get("code") or draft["code"]

r = kb_call("commit", "POST", f"/companies/DEFAULT/transactions/{draft_code}/commit", {"commit": True})
check(r.status_code == 404 and "uncommitted document is not kept" in json.dumps(answer(r)),
      "POST .../{code}/commit of the uncommitted invoice: 404, saying levy keeps no uncommitted document", r)

# --- The TaxRates mode ---------------------------------------------------------------------


def kb_rates_tax(label, r, amount):
    """TaxRatesTaxCalculator: one item per rate, each rate x amount rounded half up."""
    t = answer(r)
    check(r.status_code == 200 and is_number(t.get("totalRate")), f"{label}: 200, totalRate a number", r)
    rates = t.get("rates") or []
    check(all(is_number(x.get("rate")) and isinstance(x.get("name"), str) and isinstance(x.get("type"), str)
              for x in rates), f"{label}: rates[] of rate, name, type", r)
    if rates:
        return sum((cents(D(x["rate"]) * amount) for x in rates), Decimal(0))
    return cents(D(t.get("totalRate") or 0) * amount)


# The Nashville account has a full address: byaddress.
r = kb_call("taxrates/byaddress", "GET", "/taxrates/byaddress", query=[
    ("line1", "200 Broadway"), ("city", "Nashville"), ("region", "TN"), ("postalCode", "37203"), ("country", "US"),
])
tax = kb_rates_tax("GET taxrates/byaddress Nashville", r, Decimal("100"))
check(D(answer(r).get("totalRate")) == Decimal("0.0975") and tax == Decimal("9.75"),
      "TaxRates mode Nashville: totalRate 9.75%, $9.75 on $100.00 rate by rate", r)

# An account with only a postal code and a country: bypostalcode.
r = kb_call("taxrates/bypostalcode", "GET", "/taxrates/bypostalcode",
            query=[("postalCode", "90012"), ("country", "US")])
tax = kb_rates_tax("GET taxrates/bypostalcode 90012", r, Decimal("49.99"))
check(tax * 100 == LA_4999,
      f"TaxRates mode Los Angeles: $49.99 taxed rate by rate ({tax}) is levy's own {LA_4999} cents", r)

# =============================================================================================
# (b) solidus_taxjar
# =============================================================================================
#
# What goes on the wire (taxjar-ruby lib/taxjar/api/request.rb; solidus_taxjar
# lib/super_good/solidus_taxjar/api.rb default_taxjar_client): the base URL is
# TAXJAR_API_URL, paths /v2/...; headers `Authorization: Bearer <key>`, a
# `User-Agent: TaxJar/Ruby (...) taxjar-ruby/<version>`, and the two solidus_taxjar adds,
# `x-api-version: 2020-08-07` and `plugin: supergoodsolidustaxjar`. GET and DELETE send the
# options as query parameters, POST and PUT as a JSON body (`Content-Type:
# application/json; charset=UTF-8`). The JSON is ActiveSupport's: Spree's BigDecimal amounts
# are JSON strings ("100.0"), ids and quantities integers, a missing tax code null; the
# amounts solidus_taxjar takes from a TaxJar answer (Taxjar::Order, cast to Float) go back
# as numbers. Any 2xx is success; the answer's object is read under its key ("tax",
# "order", ...). The cassettes (spec/fixtures/cassettes/features/spree/admin/refund.yml and
# Reporting_orders_to_TaxJar/shipping_a_complete_and_paid_order.yml) show these bodies.
#
# The flows:
#   * checkout (tax_calculator.rb, calculator_helper.rb, cached_api.rb): GET nexus/regions
#     (cached), and only when the address's state is among the regions' region_code,
#     POST taxes with api_params.rb order_params (customer_id, to_country, to_zip, to_city,
#     to_state, to_street, line_items [id, quantity, unit_price, discount,
#     product_tax_code], shipping; no from_ address). It reads breakdown.line_items[].id
#     (to_i, the Spree line item id) and .tax_collectable, and breakdown.shipping
#     .tax_collectable, spread over the shipments.
#   * tax_rate_calculator.rb: POST taxes {amount: 100, shipping: 0, to_...}, reading `rate`.
#   * the admin settings page: GET categories (product_tax_code, name) and nexus regions.
#   * reporting, once the order is shipped and paid (reporting.rb, reportable.rb, the jobs):
#     POST transactions/orders with transaction_params (the to_ address, line_items [id,
#     quantity, product_identifier, description, product_tax_code, unit_price, discount,
#     sales_tax], transaction_id = the order number, transaction_date = completed_at in
#     ISO 8601, amount = paid - refunded - tax, shipping, sales_tax), reading
#     transaction_id and transaction_date; later GET transactions/orders/{id}, comparing
#     its `amount` with the order's; when it differs (a return), a full refund of the
#     reported order built from that GET (transaction_id "<id>-REFUND",
#     transaction_reference_id <id>, amount, shipping and sales_tax negated, every line as
#     answered with unit_price, discount and sales_tax negated), then POST
#     transactions/orders of the order as it now is, under "<number>-1".
#   * Api methods the gem offers its host application but does not call itself at this
#     commit (api.rb): update_transaction_for (PUT transactions/orders/{number}),
#     delete_transaction_for (DELETE transactions/orders/{number}), create_refund_for (POST
#     transactions/refunds of a reimbursement: amount and sales_tax, shipping 0, no
#     line_items), validate_spree_address (POST addresses/validate, addresses.rb) and
#     tax_rates_for (GET rates/{zip}?street&city&state&country).

section("solidus_taxjar")

TJ_HEADERS = {
    "Authorization": "Bearer " + KEY,
    "User-Agent": "TaxJar/Ruby (Linux levy-ci; ruby 3.2.2-p53; OpenSSL 3.1.2 1 Aug 2023) taxjar-ruby/3.0.4",
    "x-api-version": "2020-08-07",
    "plugin": "supergoodsolidustaxjar",
}
tj_http = requests.Session()


def tj_call(method, path, options=None):
    url = BASE + "/v2/" + path
    if method in ("GET", "DELETE"):
        query = urllib.parse.urlencode(options or {}, quote_via=urllib.parse.quote)
        return tj_http.request(method, url + ("?" + query if query else ""), headers=TJ_HEADERS, timeout=10)
    headers = dict(TJ_HEADERS, **{"Content-Type": "application/json; charset=UTF-8"})
    return tj_http.request(method, url, data=json.dumps(options).encode(), headers=headers, timeout=10)


def obj(r, key):
    v = answer(r).get(key)
    return v if isinstance(v, dict) else {}


def to_address(a):
    return {
        "to_country": a["address_country"],
        "to_zip": a["address_postal_code"],
        "to_city": a["address_city"],
        "to_state": a["address_province"],
        "to_street": a["address_line_1"],
    }


def tax_params(customer_id, address, lines, shipping):
    """order_params; lines as NASH_LINES below."""
    return dict(
        {"customer_id": customer_id},
        **to_address(address),
        line_items=[
            {"id": i, "quantity": q, "unit_price": price, "discount": 0, "product_tax_code": code}
            for i, q, price, _, _, code, _ in lines
        ],
        shipping=shipping,
    )


def transaction_params(customer_id, address, lines, number, amount, shipping, sales_tax):
    return dict(
        {"customer_id": customer_id},
        **to_address(address),
        line_items=[
            {"id": i, "quantity": q, "product_identifier": sku, "description": name,
             "product_tax_code": code, "unit_price": price, "discount": 0, "sales_tax": tax}
            for i, q, price, sku, name, code, tax in lines
        ],
        transaction_id=number,
        transaction_date=NOW.strftime("%Y-%m-%dT%H:%M:%SZ"),
        amount=amount,
        shipping=shipping,
        sales_tax=sales_tax,
    )


def checked_breakdown(label, r, expected_lines, expected_shipping=None):
    """What TaxCalculator reads: breakdown.line_items[].id (to_i) and tax_collectable, and
    breakdown.shipping.tax_collectable. expected_lines: {spree line id: tax}."""
    tax = obj(r, "tax")
    breakdown = tax.get("breakdown") or {}
    check(r.status_code == 200 and isinstance(breakdown, dict) and breakdown,
          f"{label}: 200 with a breakdown", r)
    got = {}
    for li in breakdown.get("line_items") or []:
        try:
            got[int(str(li.get("id")))] = D(li.get("tax_collectable"))
        except ValueError:
            pass
    said = ", ".join(f"line {k}: {v}" for k, v in expected_lines.items())
    check(got == expected_lines, f"{label}: breakdown.line_items by Spree line id ({said})", r)
    if expected_shipping is not None:
        shipping = breakdown.get("shipping") or {}
        check(D(shipping.get("tax_collectable")) == expected_shipping,
              f"{label}: breakdown.shipping.tax_collectable {expected_shipping}", r)
    return tax


r = tj_call("GET", "nexus/regions")
regions = answer(r).get("regions") or []
check(r.status_code == 200 and {"TN", "CA"} <= {g.get("region_code") for g in regions if isinstance(g, dict)},
      "GET nexus/regions: region_code TN and CA (checkout taxes only a state listed)", r)

r = tj_call("GET", "categories")
categories = answer(r).get("categories") or []
check(r.status_code == 200 and any(c.get("product_tax_code") == "20010" and c.get("name") for c in categories),
      "GET categories (settings page): product_tax_code and name, 20010 among them", r)

# --- Nashville: a $100.00 jacket and two $20.00 shirts (clothing, 20010), $10.00 shipping --
NASH_NUMBER = "R" + RUN
NASH_LINES = [  # id, quantity, unit price, SKU, variant name, tax code, the line's tax
    (1, 1, "100.0", "JKT-1", "Denim Jacket - Master", "20010", "9.75"),
    (2, 2, "20.0", "TEE-1", "Plain Tee - Master", "20010", "3.9"),
]
r = tj_call("POST", "taxes", tax_params("1", NASHVILLE, NASH_LINES, "10.0"))
tax = checked_breakdown("POST taxes Nashville (checkout)", r, {1: Decimal("9.75"), 2: Decimal("3.9")}, Decimal("0.98"))
native = levy_native(NASHVILLE, [(10000, "CLOTHING"), (4000, "CLOTHING"), (1000, "SHIPPING")])
check(D(tax.get("amount_to_collect")) == Decimal("14.63") and native == 1463,
      "POST taxes Nashville: $14.63 in all, worked by hand and levy's own", r)

r = tj_call("POST", "taxes", dict({"amount": 100, "shipping": 0}, **to_address(NASHVILLE)))
check(r.status_code == 200 and D(obj(r, "tax").get("rate")) == Decimal("0.0975"),
      "POST taxes {amount: 100, shipping: 0} (TaxRateCalculator) Nashville: rate 0.0975", r)

# Shipped and paid: reported. Paid $164.63, tax $14.63: amount 150.0.
order = transaction_params("1", NASHVILLE, NASH_LINES, NASH_NUMBER, "150.0", "10.0", "14.63")
r = tj_call("POST", "transactions/orders", order)
o = obj(r, "order")
check(200 <= r.status_code < 300 and o.get("transaction_id") == NASH_NUMBER and o.get("transaction_date"),
      "POST transactions/orders Nashville (ISO 8601 transaction_date, string amounts): "
      "2xx, transaction_id and transaction_date", r)
check(D(o.get("sales_tax")) == Decimal("14.63"), "POST transactions/orders Nashville: sales_tax 14.63 recorded", r)

r = tj_call("GET", f"transactions/orders/{NASH_NUMBER}")
shown = obj(r, "order")
check(r.status_code == 200 and shown.get("transaction_id") == NASH_NUMBER and D(shown.get("amount")) == Decimal("150"),
      "GET transactions/orders/{id} (amount_changed?, show_or_create_transaction): amount 150.0 "
      "as sent (a TaxJar order's amount holds its shipping; solidus_taxjar compares it with what "
      "was paid less tax, and replaces the order when they differ)", r)

# The shirts returned and refunded: the amount changed, so the reported order is refunded
# in full from what GET answers, and the order as it now is reported again under "-1".
r = tj_call("GET", f"transactions/orders/{NASH_NUMBER}")
shown = obj(r, "order")
check(r.status_code == 200 and all(
    shown.get(f) is not None for f in ("transaction_id", "amount", "sales_tax", "shipping")
) and all(
    isinstance(li, dict) and all(li.get(f) is not None for f in ("unit_price", "discount", "sales_tax"))
    for li in shown.get("line_items") or [None]
), "GET transactions/orders/{id}: amount, sales_tax, shipping and each line's unit_price, discount, "
   "sales_tax (refund_transaction_params negates them)", r)


def negated(x):
    return -float(D(x) if D(x) is not None else 0)


refund = dict(
    to_address(NASHVILLE),
    transaction_id=f"{shown.get('transaction_id', NASH_NUMBER)}-REFUND",
    transaction_reference_id=shown.get("transaction_id", NASH_NUMBER),
    transaction_date=order["transaction_date"],
    amount=negated(shown.get("amount")),
    sales_tax=negated(shown.get("sales_tax")),
    shipping=negated(shown.get("shipping")),
    line_items=[
        dict(li, unit_price=negated(li.get("unit_price")), discount=negated(li.get("discount")),
             sales_tax=negated(li.get("sales_tax")))
        for li in shown.get("line_items") or [] if isinstance(li, dict)
    ],
)
r = tj_call("POST", "transactions/refunds", refund)
rf = obj(r, "refund")
check(200 <= r.status_code < 300 and rf.get("transaction_id") == f"{NASH_NUMBER}-REFUND" and rf.get("transaction_date"),
      "POST transactions/refunds of the whole order, lines as GET answered them: 2xx, "
      "transaction_id <number>-REFUND and transaction_date", r)
check(D(rf.get("sales_tax")) == Decimal("-14.63"), "POST transactions/refunds: the order's $14.63 taken back", r)

# Paid $164.63, refunded $43.90 of it (the shirts and their $3.90): amount 110.0, tax $10.73.
replacement = transaction_params("1", NASHVILLE, NASH_LINES[:1], f"{NASH_NUMBER}-1", "110.0", "10.0", "10.73")
r = tj_call("POST", "transactions/orders", replacement)
o = obj(r, "order")
check(200 <= r.status_code < 300 and o.get("transaction_id") == f"{NASH_NUMBER}-1" and o.get("transaction_date"),
      "POST transactions/orders <number>-1 (the order as it now is): 2xx", r)
check(D(o.get("sales_tax")) == Decimal("10.73"),
      "POST transactions/orders <number>-1: $9.75 on the jacket and $0.98 on the shipping, $10.73", r)

r = tj_call("GET", f"transactions/orders/{NASH_NUMBER}-1")
check(r.status_code == 200 and D(obj(r, "order").get("amount")) == Decimal("110"),
      "GET transactions/orders/<number>-1: amount 110.0 as sent (shipping included)", r)

# --- Los Angeles: 2 x $50.00 of a product with no tax code, no shipping ---------------------
LA_NUMBER = "R" + ("%09d" % ((int(RUN) + 1) % 10**9))
LA_TAX = Decimal(LA_10000) / 100
LA_LINES = [(11, 2, "50.0", "MUG-1", "Mug - Master", None, str(LA_TAX))]
r = tj_call("POST", "taxes", tax_params("2", LOS_ANGELES, LA_LINES, "0.0"))
tax = checked_breakdown("POST taxes Los Angeles (product_tax_code null)", r, {11: LA_TAX})
check(D(tax.get("amount_to_collect")) == LA_TAX,
      f"POST taxes Los Angeles: amount_to_collect is levy's own ({LA_10000} cents)", r)

r = tj_call("POST", "transactions/orders",
            transaction_params("2", LOS_ANGELES, LA_LINES, LA_NUMBER, "100.0", "0.0", str(LA_TAX)))
check(200 <= r.status_code < 300 and obj(r, "order").get("transaction_id") == LA_NUMBER
      and D(obj(r, "order").get("sales_tax")) == LA_TAX,
      f"POST transactions/orders Los Angeles: 2xx, levy's own {LA_10000} cents recorded", r)

# --- The Api methods solidus_taxjar offers its host application ------------------------------
r = tj_call("GET", "rates/90012", {"street": "200 N Spring St", "city": "Los Angeles", "state": "CA", "country": "US"})
rate = obj(r, "rate")
check(r.status_code == 200 and D(rate.get("combined_rate")) is not None
      and D(rate.get("combined_rate")) * 100 == Decimal(LA_10000) / 100,
      f"GET rates/90012?street&city&state&country (tax_rates_for): combined_rate is levy's own "
      f"{LA_10000} cents on $100.00", r)

# validate_spree_address (POST addresses/validate): levy does not validate or normalize
# street addresses (it knows a ZIP's places, not a street's spelling), and answers 404 in
# TaxJar's error shape; solidus_taxjar's own flows never call it.
r = tj_call("POST", "addresses/validate",
            {"country": "US", "state": "CA", "zip": "90012", "city": "Los Angeles", "street": "200 N Spring St"})
check(r.status_code == 404 and answer(r).get("status") == 404 and isinstance(answer(r).get("error"), str),
      "POST addresses/validate (validate_spree_address): not offered, 404 in TaxJar's error shape", r)

# update_transaction_for: the order changed in place (a third mug), sent under the order number.
LA_15000 = levy_native(LOS_ANGELES, [(15000, "GENERAL_MERCHANDISE")])
r = tj_call("PUT", f"transactions/orders/{LA_NUMBER}",
            transaction_params("2", LOS_ANGELES, [(11, 3, "50.0", "MUG-1", "Mug - Master", None, str(Decimal(LA_15000) / 100))],
                               LA_NUMBER, "150.0", "0.0", str(Decimal(LA_15000) / 100)))
check(r.status_code == 200 and obj(r, "order").get("transaction_id") == LA_NUMBER
      and D(obj(r, "order").get("sales_tax")) == Decimal(LA_15000) / 100,
      f"PUT transactions/orders/{{number}} (update_transaction_for): 200, levy's own {LA_15000} cents", r)

# create_refund_for: one mug reimbursed ($50.00 and its tax), no line_items.
LA_5000 = levy_native(LOS_ANGELES, [(5000, "GENERAL_MERCHANDISE")])
r = tj_call("POST", "transactions/refunds", dict(
    to_address(LOS_ANGELES),
    transaction_id="RI" + RUN,
    transaction_reference_id=LA_NUMBER,
    transaction_date=NOW.strftime("%Y-%m-%dT%H:%M:%SZ"),
    amount="50.0",
    shipping=0,
    sales_tax=str(Decimal(LA_5000) / 100),
))
check(200 <= r.status_code < 300 and obj(r, "refund").get("transaction_id") == "RI" + RUN,
      "POST transactions/refunds of a reimbursement (create_refund_for: part of the order, "
      "no line_items): 2xx", r)

r = tj_call("DELETE", f"transactions/orders/{LA_NUMBER}")
check(r.status_code == 200 and obj(r, "order").get("transaction_id") == LA_NUMBER,
      "DELETE transactions/orders/{number} (delete_transaction_for): 200", r)

print(f"{passed} checks passed, {len(failed)} failed")
if failed:
    print("failed:", file=sys.stderr)
    for what in failed:
        print(f"  {what}", file=sys.stderr)
    sys.exit(1)
