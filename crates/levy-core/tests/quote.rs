//! The front door ([`levy_core::quote`]): where a sale is taxed, what is refused and by
//! which kind, a sale in another currency than its place's, and a batch that answers as
//! one sale at a time. Expected numbers are worked by hand beside them, on the scenario
//! table of `common` (Nashville 37203: Tennessee 7%, the single-article band of 2.75% on
//! $1,600 to $3,200 of an item's price, Davidson County 2.25% on its first $1,600).

mod common;

use common::*;
use levy_core::quote::{Ip, Order, Quoter, UnresolvedOrigin};
use levy_core::*;

fn order_at(t: &Table<AlignedBytes>, zip: &str, amount: i64) -> Order {
    let mut order = Order::new();
    order.address = Some(us_zip(zip));
    order.date = Some(day());
    order
        .sale
        .lines
        .push(line(t, "GENERAL_MERCHANDISE", Decimal::from(amount)));
    order
}

fn ip(value: &str) -> Option<Ip> {
    Some(Ip {
        value: value.into(),
        mode: IpMode::Strict,
    })
}

#[test]
fn the_address_decides_first_and_the_ip_when_it_fails_or_is_absent() {
    let t = scenario();
    let mut q = Quoter::new();
    // 203.0.113.127 is a US range with ZIP 37203; $100 there owes 7% + 2.25% = $9.25.
    let mut o = order_at(&t, "37203", 10_000);
    o.ip = ip("203.0.113.127");
    let got = q.quote(&t, &mut o).unwrap();
    assert_eq!(got.location.source, LocationSource::Address);
    assert_eq!(got.calculation.total_tax, Decimal::from(925));
    // No address: the IP.
    o.address = None;
    let got = q.quote(&t, &mut o).unwrap();
    assert_eq!(got.location.source, LocationSource::Ip);
    assert_eq!(got.calculation.total_tax, Decimal::from(925));
    // An address that fails: the IP answers.
    o.address = Some(Address {
        region: "TX".into(),
        ..us_zip("37203")
    });
    let got = q.quote(&t, &mut o).unwrap();
    assert_eq!(got.location.source, LocationSource::Ip);
    // Both fail: the address's kind, with the IP's error beside it.
    o.ip = ip("not an ip");
    let e = q.quote(&t, &mut o).unwrap_err();
    assert_eq!(e.kind(), QuoteErrorKind::ZipStateMismatch);
    assert!(e.to_string().contains("INVALID_IP_FORMAT"), "{e}");
    // Neither: refused as such.
    o.address = None;
    o.ip = None;
    assert_eq!(
        q.quote(&t, &mut o).unwrap_err().kind(),
        QuoteErrorKind::NoPlace
    );
}

#[test]
fn an_origin_that_fails_is_refused_or_set_aside_as_the_order_says() {
    let t = scenario();
    let mut q = Quoter::new();
    let mut o = order_at(&t, "37203", 10_000);
    o.origin = Some(us_zip("99999x"));
    assert_eq!(
        q.quote(&t, &mut o).unwrap_err().kind(),
        QuoteErrorKind::OriginUnresolved
    );
    o.unresolved_origin = UnresolvedOrigin::Destination;
    let got = q.quote(&t, &mut o).unwrap();
    assert!(got.origin.is_none() && got.origin_error.is_some());
    assert_eq!(got.calculation.total_tax, Decimal::from(925));
}

#[test]
fn a_us_zip_with_country_ca_is_refused() {
    let t = scenario();
    let mut q = Quoter::new();
    let mut o = order_at(&t, "37203", 10_000);
    o.address = Some(Address {
        postal_code: "37203".into(),
        country: "CA".into(),
        ..Address::default()
    });
    let e = q.quote(&t, &mut o).unwrap_err();
    assert_eq!(e.kind(), QuoteErrorKind::MalformedAddress, "{e}");
    // A Canadian postal code there is Ontario's (prefix M): Canada's GST 5% at least.
    o.address = Some(Address {
        postal_code: "M5V 2T6".into(),
        country: "CA".into(),
        ..Address::default()
    });
    let got = q.quote(&t, &mut o).unwrap();
    assert!(got.calculation.total_tax >= Decimal::from(500));
}

#[test]
fn yen_in_nashville_are_refused_without_a_rate_and_converted_with_one() {
    let t = scenario();
    let mut q = Quoter::new();
    let jpy = Currency::from_code("JPY").unwrap();
    let mut o = order_at(&t, "37203", 10_000);
    o.sale.currency = jpy;
    let e = q.quote(&t, &mut o).unwrap_err();
    assert_eq!(e.kind(), QuoteErrorKind::ExchangeRateRequired, "{e}");
    // At 0.0067 dollars a yen, ¥10,000 are $67.00: 7% of it is 469 cents, ¥700; Davidson's
    // 2.25% is 150.75 cents, ¥225; the band holds none of it. ¥925 in all.
    o.exchange_rate = Some(Decimal::new(67, 4));
    let got = q.quote(&t, &mut o).unwrap();
    let c = got.calculation;
    assert_eq!(c.currency, jpy);
    assert_eq!((c.total_excluding_tax, c.total_tax), (d("10000"), d("925")));
    let dues: Vec<Decimal> = c.lines[0].jurisdictions.iter().map(|j| j.tax_due).collect();
    assert_eq!(dues, [d("700"), d("0"), d("225")]);
    assert_eq!(got.converted_at, Some(Decimal::new(67, 4)));
    // ¥1,000,000 are $6,700: 7% is $469 (¥70,000); the band takes 2.75% of $1,600, $44
    // (¥6,567.16…); Davidson 2.25% of its $1,600, $36 (¥5,373.13…): $549, ¥81,940.30 → ¥81,940.
    // Read in yen against dollar bands it would be ¥70,000 + 2.75% × 1,600 + 2.25% × 1,600
    // = ¥70,080.
    o.sale.lines[0].amount = Decimal::from(1_000_000);
    let c = q.quote(&t, &mut o).unwrap().calculation;
    assert_eq!(c.total_tax, d("81940"));
    assert_eq!(c.total_including_tax, d("1081940"));
    // Amounts including tax: ¥1,081,940 are $7,248.998 → 724,900 cents (rounded); backing
    // the tax out in dollars leaves 670,000 cents excluding (724,900 − 54,900), ¥1,000,000.
    o.sale.tax_included = true;
    o.sale.lines[0].amount = d("1081940");
    let c = q.quote(&t, &mut o).unwrap().calculation;
    assert_eq!(
        (c.total_excluding_tax, c.total_tax),
        (d("1000000"), d("81940"))
    );
}

#[test]
fn another_currency_on_plain_rates_needs_no_rate() {
    let t = scenario();
    let mut q = Quoter::new();
    // Dollars in Japan: the 10% consumption tax is the same fraction in any currency; $12.34
    // owe 123.4 cents → 123.
    let mut o = order_at(&t, "37203", 1_234);
    o.address = Some(Address {
        country: "JP".into(),
        ..Address::default()
    });
    let c = q.quote(&t, &mut o).unwrap().calculation;
    assert_eq!(c.total_tax, d("123"));
    // Yen in Japan likewise, and yen in the US on a plain place too would be: but
    // Nashville's band is an amount, so the sale above was refused.
    o.sale.currency = Currency::from_code("JPY").unwrap();
    assert_eq!(q.quote(&t, &mut o).unwrap().calculation.total_tax, d("123"));
}

#[test]
fn a_batch_answers_each_order_as_the_quoter_does_alone() {
    let t = scenario();
    let mut orders: Vec<Order> = [10_000, 250_000, 500_000]
        .iter()
        .map(|&a| order_at(&t, "37203", a))
        .collect();
    orders.push(Order {
        address: None,
        ..order_at(&t, "37203", 1)
    });
    let mut jpy = order_at(&t, "37203", 10_000);
    jpy.sale.currency = Currency::from_code("JPY").unwrap();
    orders.push(jpy.clone());
    jpy.exchange_rate = Some(Decimal::new(67, 4));
    orders.push(jpy);
    let mut q = Quoter::new();
    let mut out = Vec::new();
    // Order 3 gives no address and is not said to be at the one before it.
    let errors = q.quote_batch(&t, &mut orders, |i| i != 3, &mut out);
    let kinds: Vec<(usize, QuoteErrorKind)> = errors.iter().map(|(i, e)| (*i, e.kind())).collect();
    assert_eq!(
        kinds,
        [
            (3, QuoteErrorKind::NoPlace),
            (4, QuoteErrorKind::ExchangeRateRequired)
        ]
    );
    assert_eq!(out.len(), orders.len());
    for (i, order) in orders.iter_mut().enumerate() {
        match q.quote(&t, order) {
            Ok(got) => assert_eq!(&out[i], got.calculation, "order {i}"),
            Err(_) => assert!(out[i].lines.is_empty() && out[i].total_tax.is_zero()),
        }
    }
    // $100, $2,500 and $5,000 (scenarios.rs: tennessee_single_article), then ¥925.
    let taxes: Vec<Decimal> = out.iter().map(|c| c.total_tax).collect();
    assert_eq!(
        taxes,
        [d("925"), d("23575"), d("43000"), d("0"), d("0"), d("925")]
    );
}

#[test]
fn an_order_said_to_be_at_the_address_before_it_need_not_carry_it() {
    let t = scenario();
    let mut q = Quoter::new();
    let mut out = Vec::new();
    // A till's batch: the first order carries the address, the next two none, each said
    // to be at the one before it. $100, $2,500 and $5,000 at 37203 as above.
    let mut orders: Vec<Order> = [10_000, 250_000, 500_000]
        .iter()
        .map(|&a| order_at(&t, "37203", a))
        .collect();
    orders[1].address = None;
    orders[2].address = None;
    assert!(q
        .quote_batch(&t, &mut orders, |_| true, &mut out)
        .is_empty());
    let taxes: Vec<Decimal> = out.iter().map(|c| c.total_tax).collect();
    assert_eq!(taxes, [d("925"), d("23575"), d("43000")]);
    // The same orders not said to be at the one before: the two without one are refused.
    let errors = q.quote_batch(&t, &mut orders, |_| false, &mut out);
    let kinds: Vec<(usize, QuoteErrorKind)> = errors.iter().map(|(i, e)| (*i, e.kind())).collect();
    assert_eq!(
        kinds,
        [(1, QuoteErrorKind::NoPlace), (2, QuoteErrorKind::NoPlace)]
    );
    // At an address that cannot be resolved, those at it are refused as it is: its own
    // error, not a share of no place, and not the place of an order before it.
    let mut orders = vec![
        order_at(&t, "37203", 10_000),
        order_at(&t, "3720", 10_000),
        order_at(&t, "37203", 10_000),
    ];
    orders[2].address = None;
    let errors = q.quote_batch(&t, &mut orders, |i| i == 2, &mut out);
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_eq!((errors[0].0, errors[1].0), (1, 2));
    assert_eq!(errors[0].1.kind(), errors[1].1.kind());
    assert_ne!(errors[1].1.kind(), QuoteErrorKind::NoPlace);
    assert_eq!(out[0].total_tax, d("925"));
}

#[test]
fn a_day_not_given_is_today() {
    let t = scenario();
    let mut q = Quoter::new();
    let mut o = order_at(&t, "37203", 10_000);
    o.date = None;
    assert_eq!(q.quote(&t, &mut o).unwrap().date, Date::today());
}
