//! The records the ledger stores, in every database alike (sealed JSON of these types).

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Who a request acts for: an account in one mode. Every record the ledger stores carries
/// its scope, and every query names it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Scope {
    /// The account.
    pub account: std::sync::Arc<str>,
    /// Live (production) mode; false for test mode.
    pub live: bool,
}

/// Declares a stored state or type: an enum stored and answered as its name.
macro_rules! stored_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $text:literal,)* }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name {
            $($(#[$vdoc])* #[serde(rename = $text)] $variant,)*
        }

        impl $name {
            /// Every value, in order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The name, as stored and answered.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                }
            }

            /// The value of a name, exactly as stored.
            pub fn parse(text: &str) -> Option<$name> {
                match text {
                    $($text => Some($name::$variant),)*
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

stored_enum! {
    /// A customer's type, which decides how a sale to it is taxed.
    CustomerKind {
        /// A consumer (the default).
        Consumer = "CONSUMER",
        /// A business.
        Business = "BUSINESS",
    }
}

stored_enum! {
    /// Whether a merchant can still sell.
    MerchantStatus {
        /// It sells.
        Active = "active",
        /// It was deleted; it is still answered, but cannot be changed or sold for.
        Deleted = "deleted",
    }
}

stored_enum! {
    /// The review outcome of a certificate, as stored; `expiring` and `expired` are
    /// derived from its dates when it is read.
    ReviewStatus {
        /// Under review.
        Processing = "processing",
        /// The reviewer needs more information.
        NeedsInfo = "needs_info",
        /// Approved.
        Active = "active",
        /// Refused.
        Invalid = "invalid",
    }
}

stored_enum! {
    /// Where a certificate request stands.
    RequestStatus {
        /// Asked, not yet answered.
        Pending = "pending",
        /// Answered with a certificate.
        Fulfilled = "fulfilled",
        /// Canceled.
        Canceled = "canceled",
        /// Refused (a terminal state).
        Invalid = "invalid",
    }
}

stored_enum! {
    /// What a registration lets the account collect.
    RegistrationKind {
        /// Sales and use tax: it decides where `automatic_tax: auto` collects.
        SalesTax = "sales_tax",
        /// A retail delivery fee (Colorado, Minnesota): once a seller has any registration,
        /// a delivery into the state owes the fee only while one of these is active there.
        RetailDeliveryFee = "retail_delivery_fee",
    }
}

/// A refund to record: its id and times, and which lines it takes back
/// ([`super::Store::insert_refund`]). The ledger's rules decide, inside the write, whether
/// it fits what remains of the transaction ([`super::refund::build`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RefundAsk {
    /// Everything left of every line.
    Full(RefundStamp),
    /// The lines given, each matched to a line of the transaction.
    Partial(RefundStamp, Vec<PartialRefundLine>),
    /// A refund another ledger made (a till's, by sync), recorded as it is when it fits.
    Synced(RefundRecord),
}

/// A new refund's id and times.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefundStamp {
    /// `ref_tr_…`.
    pub id: String,
    /// Epoch seconds of the refund.
    pub processed_at: i64,
    /// Epoch seconds.
    pub created_at: i64,
}

/// One line of a partial refund, as asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartialRefundLine {
    /// The registered product of the line to refund.
    pub product: Option<String>,
    /// The client's line id, or the `li_` id, of the line to refund.
    pub line_id: Option<String>,
    /// The quantity refunded; the line's when `None`.
    pub quantity: Option<u32>,
    /// Sales excluding tax to take back, zero or negative.
    pub sales: Decimal,
    /// Tax to take back, zero or negative.
    pub tax: Decimal,
}

/// A change to a merchant ([`super::PlatformStore::change_merchant`]), applied inside the
/// store's write by the ledger's rules ([`super::rules::change_merchant`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MerchantChange {
    /// A partial update: each field given replaces the stored one.
    Update(Box<MerchantUpdate>),
    /// The merchant is deleted (deleting again changes nothing).
    Delete,
}

/// The fields of a partial update of a merchant; `None` leaves a field as it is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MerchantUpdate {
    /// `reference_merchant_id`.
    pub reference: Option<String>,
    /// Name.
    pub name: Option<String>,
    /// E-mail.
    pub email: Option<String>,
    /// The merchant's address.
    pub default_address: Option<AddressRecord>,
    /// Tax ids.
    pub tax_ids: Option<Vec<TaxIdRecord>>,
    /// Metadata, as a whole.
    pub metadata: Option<Map<String, Value>>,
}

/// A buyer's tax id as stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaxIdRecord {
    /// `VAT`, `GST` or `EIN`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The id.
    pub value: String,
}

/// A customer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CustomerRecord {
    /// `cus_…`.
    pub id: String,
    /// The client's id for the customer.
    pub reference_customer_id: Option<String>,
    /// Name.
    pub name: Option<String>,
    /// E-mail.
    pub email: String,
    /// Exempt from tax everywhere.
    pub is_tax_exempt: bool,
    /// `CONSUMER` or `BUSINESS`, when given.
    pub kind: Option<CustomerKind>,
    /// Tax ids.
    pub tax_ids: Vec<TaxIdRecord>,
    /// Epoch seconds.
    pub created_at: i64,
}

/// A product.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProductRecord {
    /// The client's product id (the key).
    pub reference_product_id: String,
    /// Name.
    pub reference_product_name: String,
    /// Category (a category of the rate table).
    pub product_category: String,
    /// Epoch seconds.
    pub created_at: i64,
    /// Epoch seconds.
    pub updated_at: i64,
}

/// One jurisdiction entry of a line, with everything needed to render it later even after
/// the rate table has been replaced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JurisdictionRecord {
    /// Statutory rate, a fraction.
    pub tax_rate: Decimal,
    /// Unrounded tax due, minor units.
    pub tax_due: Decimal,
    /// Fee, minor units.
    pub fee: Decimal,
    /// Rate type label.
    pub rate_type: String,
    /// Jurisdiction name.
    pub jurisdiction_name: String,
    /// Jurisdiction code (FIPS, ISO).
    pub jurisdiction_code: String,
    /// Authority name.
    pub authority_name: String,
    /// `STATE`, `COUNTY`, …
    pub authority_type: String,
    /// `SALES`, `USE`, `VAT`, `GST`.
    pub tax_type: String,
    /// `RATE_FRAC`, `PROGRESSIVE_RATE`, …
    pub note: String,
    /// The rule id in the table that produced it.
    pub rule_id: u32,
    /// The exemption certificate that zeroed this entry, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exemption_certificate_id: Option<String>,
    /// The part of the line's amount excluding tax this entry taxed, minor units,
    /// unrounded: after the rule's caps and bands, thresholds, holidays and exemptions (the
    /// first $5,000 of an item for a Florida surtax, $1,600.01 to $3,200 for Tennessee's
    /// single article tax; zero where nothing was taxed). A report sums it as the
    /// jurisdiction's taxable sales. `None` on records from before it was kept: the
    /// report then counts the line's whole amount.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub taxable_base: Option<Decimal>,
}

/// One line of a calculation, transaction or refund.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineRecord {
    /// `li_…`.
    pub line_item_id: String,
    /// The registered product, when the line named one.
    pub reference_product_id: Option<String>,
    /// Its name.
    pub reference_product_name: Option<String>,
    /// The client's line id.
    pub reference_line_item_id: Option<String>,
    /// The tax code used.
    pub product_tax_code: String,
    /// Quantity.
    pub quantity: u32,
    /// Minor units.
    pub amount_excluding_tax: Decimal,
    /// Minor units.
    pub tax_amount: Decimal,
    /// Minor units.
    pub amount_including_tax: Decimal,
    /// Jurisdiction entries.
    pub jurisdictions: Vec<JurisdictionRecord>,
}

/// Where a calculation was placed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlaceRecord {
    /// `EXACT`, `POSTAL_FALLBACK_1`, `POSTAL_ONLY`.
    pub status: String,
    /// `STREET` … `APPROXIMATED`.
    pub precision: String,
    /// `address` or `ip`.
    pub source: String,
    /// Address used, `address_*` fields.
    pub line1: String,
    /// Second line.
    pub line2: String,
    /// City.
    pub city: String,
    /// Region (state, province).
    pub region: String,
    /// Postal code.
    pub postal_code: String,
    /// Country.
    pub country: String,
}

/// A calculation, stored until it expires.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CalculationRecord {
    /// `calc_…`.
    pub id: String,
    /// Epoch seconds.
    pub created_at: i64,
    /// Epoch seconds; a transaction cannot be made from it afterwards.
    pub expires_at: i64,
    /// When the sale happened (decided the rates).
    pub transacted_at: i64,
    /// ISO 4217.
    pub currency: String,
    /// Whether amounts included tax.
    pub tax_included: bool,
    /// `auto` or `disabled`.
    pub automatic_tax: String,
    /// The customer id given, if any.
    pub customer_id: Option<String>,
    /// `CONSUMER` or `BUSINESS`.
    pub customer_type: CustomerKind,
    /// Where.
    pub place: PlaceRecord,
    /// Lines.
    pub lines: Vec<LineRecord>,
    /// Sum of line tax.
    pub total_tax: Decimal,
    /// Sum of lines excluding tax.
    pub total_excluding_tax: Decimal,
    /// Sum of lines including tax.
    pub total_including_tax: Decimal,
    /// Hash of the table that produced it.
    pub table_hash: String,
    /// Client metadata.
    pub metadata: Option<Map<String, Value>>,
}

/// A transaction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransactionRecord {
    /// `tr_…`.
    pub id: String,
    /// The calculation it was made from.
    pub calculation_id: String,
    /// The client's order id (unique per account and mode).
    pub reference_order_id: String,
    /// Epoch seconds of the sale.
    pub processed_at: i64,
    /// Epoch seconds.
    pub created_at: i64,
    /// ISO 4217.
    pub currency: String,
    /// Whether amounts included tax.
    pub tax_included: bool,
    /// ISO country of the sale's place.
    pub country: String,
    /// Region of the sale's place.
    pub region: String,
    /// Lines, copied from the calculation.
    pub lines: Vec<LineRecord>,
    /// Client metadata.
    pub metadata: Option<Map<String, Value>>,
    /// When deleted, if it was.
    pub deleted_at: Option<i64>,
    /// Set on platform transactions: `order` or `fee`, payment and merchant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<PlatformTransactionInfo>,
    /// The hash of the rate table that calculated it (absent on records stored before
    /// it was kept); a central ledger that receives the record by sync flags a hash it
    /// does not know.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_hash: Option<String>,
    /// The transaction that replaced this one under its order id (a new version of the
    /// sale: an adjusted document, an updated order), set with `deleted_at` when it was
    /// replaced ([`super::Write::Replacement`]); absent on every other transaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaced_by: Option<String>,
}

/// One refunded line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefundLineRecord {
    /// Index of the transaction's line.
    pub index: usize,
    /// The line with negative amounts.
    pub line: LineRecord,
}

/// A refund.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefundRecord {
    /// `ref_tr_…`.
    pub id: String,
    /// The transaction refunded.
    pub transaction_id: String,
    /// `full` or `partial`.
    pub refund_type: String,
    /// Epoch seconds.
    pub processed_at: i64,
    /// Epoch seconds.
    pub created_at: i64,
    /// Lines, negative amounts.
    pub lines: Vec<RefundLineRecord>,
    /// When reversed, if it was.
    pub reversed_at: Option<i64>,
}

/// What a calculation reads from the ledger ([`Store::calculation_reads`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CalculationReads {
    /// The stored customer the request named, if it exists.
    pub customer: Option<CustomerRecord>,
    /// Per line: the registered product it names, `None` when it names none or the
    /// product does not exist.
    pub products: Vec<Option<ProductRecord>>,
    /// The customer's certificates (live mode, a customer not exempt everywhere).
    pub certificates: Vec<CertificateRecord>,
    /// The seller's registrations active at the sale's time, of every kind, by id (read
    /// when asked for: a calculation with `automatic_tax: auto`); the seller is the
    /// platform merchant, or the account itself ([`SellerAt`]).
    pub registrations: Vec<RegistrationRecord>,
    /// The kinds the seller has registrations of, active or not, in the order of
    /// [`RegistrationKind::ALL`]: a seller with none at all collects everywhere.
    pub registered: Vec<RegistrationKind>,
}

/// Whose registrations a calculation reads, and for when ([`Store::calculation_reads`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SellerAt<'a> {
    /// The seller: a merchant's `merch_…` id, or `None` for the account's own.
    pub seller: Option<&'a str>,
    /// The sale's time, epoch seconds: a registration is active at it when
    /// `active_from <= at < expires_at`.
    pub at: i64,
}

impl RegistrationRecord {
    /// The seller column a ledger keeps beside the sealed record, for the index of a
    /// calculation's reads: the merchant's id, `""` for the account's own.
    pub fn seller_key(&self) -> &str {
        self.merchant_id.as_deref().unwrap_or("")
    }

    /// The end column kept beside it: `expires_at`, or `i64::MAX` when open-ended, so
    /// that "active at `at`" is the range `active_until > at` of that index.
    pub fn active_until(&self) -> i64 {
        self.expires_at.unwrap_or(i64::MAX)
    }
}

/// An event of a till's outbox ([`SqliteStore::outbox`]): a record to send to a central
/// ledger.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutboxEvent {
    /// Its place in the outbox (increasing).
    pub seq: i64,
    /// The account (internal id) that wrote it.
    pub account: String,
    /// `transaction`, `refund`, `reversal` or `deletion`.
    pub kind: String,
    /// The record's id (`tr_…`, `ref_tr_…`).
    pub id: String,
    /// The record, sealed with its digest (`{"blake3":"…","record":{…}}`).
    pub record: String,
}

/// What the central ledger answered for one outbox event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutboxMark {
    /// The event.
    pub seq: i64,
    /// `None`: recorded (now or before); `Some(why)`: a conflict, not to be sent again.
    pub conflict: Option<String>,
}

/// Live sales in one state or country, for nexus tracking.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NexusTotal {
    /// ISO country.
    pub country: String,
    /// Region (state, province), empty for a whole country.
    pub region: String,
    /// ISO 4217.
    pub currency: String,
    /// Sales excluding tax, minor units, net of refunds.
    pub sales: Decimal,
    /// Number of transactions (deleted ones do not count).
    pub count: i64,
}

/// A seller's sales in one place, currency and calendar month, for economic-nexus
/// monitoring ([`super::months`]): net of refunds, in both modes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NexusMonth {
    /// ISO country.
    pub country: String,
    /// Region (state, province), empty for a whole country.
    pub region: String,
    /// ISO 4217, as the transactions give it.
    pub currency: String,
    /// `YYYY-MM`, UTC.
    pub month: String,
    /// Sales excluding tax of every line, minor units, net of refunds.
    pub gross: Decimal,
    /// The part of them on lines with tax.
    pub taxable: Decimal,
    /// Transactions, net of deletions and of refunds that left nothing of a sale.
    pub count: i64,
}

/// What `GET /tax/nexus` reads from the ledger in one snapshot ([`Store::nexus_reads`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NexusReads {
    /// The scope's monthly sales in the country, by region, currency and month.
    pub months: Vec<NexusMonth>,
    /// The scope's `sales_tax` registrations, expired ones included.
    pub registrations: Vec<RegistrationRecord>,
}

/// What an account and mode store of calculations (and platform calculations) not yet
/// purged ([`Store::stored_calculations`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoredCalculations {
    /// How many.
    pub count: u64,
    /// Their bytes as the ledger stores them (SQLite: packed; PostgreSQL: the sealed
    /// record's text).
    pub bytes: u64,
}

/// A merchant (a seller on a platform).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MerchantRecord {
    /// `merch_…`.
    pub id: String,
    /// The client's id for the merchant (unique per account and mode).
    pub reference_merchant_id: String,
    /// Name.
    pub name: String,
    /// E-mail.
    pub email: Option<String>,
    /// The merchant's address: the origin of its platform calculations.
    pub default_address: AddressRecord,
    /// Tax ids.
    pub tax_ids: Vec<TaxIdRecord>,
    /// Whether it can still sell.
    pub status: MerchantStatus,
    /// Epoch seconds.
    pub created_at: i64,
    /// Epoch seconds of the last change.
    pub updated_at: i64,
    /// When deleted, if it was.
    pub deleted_at: Option<i64>,
    /// Client metadata: string values only.
    pub metadata: Map<String, Value>,
}

/// A postal address with the interface's `address_*` fields.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddressRecord {
    /// `address_line_1`.
    pub line1: String,
    /// `address_line_2`.
    pub line2: String,
    /// `address_city`.
    pub city: String,
    /// `address_province`.
    pub region: String,
    /// `address_postal_code`.
    pub postal_code: String,
    /// `address_country`.
    pub country: String,
}

/// Which merchants a list shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MerchantFilter {
    /// Only `active` merchants.
    Active,
    /// Only `deleted` merchants.
    Deleted,
    /// Both.
    All,
}

impl MerchantFilter {
    /// The statuses it shows, as a SQL `LIKE` pattern (`%` for all).
    pub fn pattern(self) -> &'static str {
        match self {
            MerchantFilter::Active => MerchantStatus::Active.as_str(),
            MerchantFilter::Deleted => MerchantStatus::Deleted.as_str(),
            MerchantFilter::All => "%",
        }
    }
}

/// A platform calculation, stored until it expires.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlatformCalculationRecord {
    /// `plat_calc_…`; `order.id` holds the same id.
    pub id: String,
    /// The merchant's `merch_…` id.
    pub merchant_id: String,
    /// The merchant's `reference_merchant_id`.
    pub reference_merchant_id: String,
    /// `marketplace_provider`, `payment_processor`, `merchant_of_record`.
    pub roles: Vec<String>,
    /// The order: lines, totals, place, customer.
    pub order: CalculationRecord,
    /// Fee lines, taxed separately from the order.
    pub fee_lines: Vec<LineRecord>,
}

/// What a platform transaction adds to a transaction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlatformTransactionInfo {
    /// `order` or `fee`.
    pub kind: String,
    /// The client's payment id.
    pub reference_payment_id: Option<String>,
    /// The merchant's `merch_…` id.
    pub merchant_id: String,
}

/// The buyer entity that owns a certificate or request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkedBuyerRecord {
    /// The buyer's id.
    pub id: String,
    /// Legal name.
    pub legal_name: Option<String>,
}

/// A place a certificate covers: every jurisdiction of a region (a state), local ones
/// included.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoverageRecord {
    /// ISO 3166-1 alpha-2.
    pub country: String,
    /// ISO 3166-2 subdivision without the country (`TN`).
    pub region: String,
}

/// A stored document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocumentInfo {
    /// MIME type (`application/pdf`).
    pub content_type: String,
    /// Size in bytes.
    pub size: u64,
    /// SHA-256 of the bytes, hex.
    pub sha256: String,
}

/// An exemption certificate (live mode only).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CertificateRecord {
    /// `cert_…`.
    pub id: String,
    /// The importer's own id for it, if given.
    pub reference: Option<String>,
    /// The `cus_…` id of the live customer it belongs to.
    pub customer_id: Option<String>,
    /// The master buyer that owns it.
    pub linked_buyer: Option<LinkedBuyerRecord>,
    /// Certificate type (`RESALE`, `GOVERNMENT`, …).
    pub kind: String,
    /// Review outcome: `processing`, `needs_info`, `active` (approved) or `invalid`;
    /// `expiring` and `expired` are derived from the dates when read.
    pub review_status: ReviewStatus,
    /// Places covered.
    pub jurisdictions: Vec<CoverageRecord>,
    /// Epoch seconds from which it is valid.
    pub valid_from: i64,
    /// Epoch seconds at which it lapses; `None` never lapses.
    pub expires_at: Option<i64>,
    /// The attached document, if any.
    pub document: Option<DocumentInfo>,
    /// Epoch seconds.
    pub created_at: i64,
    /// Epoch seconds.
    pub updated_at: i64,
}

/// A certificate request (live mode only).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CertificateRequestRecord {
    /// `certreq_…`.
    pub id: String,
    /// The importer's own id for it, if given.
    pub reference: Option<String>,
    /// `pending`, `fulfilled`, `canceled`, `invalid`.
    pub status: RequestStatus,
    /// The `cus_…` id of the live customer asked.
    pub customer_id: Option<String>,
    /// The master buyer asked.
    pub linked_buyer: Option<LinkedBuyerRecord>,
    /// Certificate type requested.
    pub kind: Option<String>,
    /// Places requested.
    pub jurisdictions: Vec<CoverageRecord>,
    /// The certificate that fulfilled it.
    pub certificate_id: Option<String>,
    /// Epoch seconds.
    pub created_at: i64,
    /// Epoch seconds.
    pub updated_at: i64,
    /// When canceled, if it was.
    pub canceled_at: Option<i64>,
}

/// Certificates, requests and documents to add in one atomic import.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CertificateBatch {
    /// Certificates, each with its document bytes.
    pub certificates: Vec<(CertificateRecord, Option<Vec<u8>>)>,
    /// Requests.
    pub requests: Vec<CertificateRequestRecord>,
}

/// A registration: where an account (or one of its merchants) is registered to collect,
/// from when and until when. Registrations are expired, never deleted, so that the ledger
/// answers for past dates.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegistrationRecord {
    /// `reg_…`.
    pub id: String,
    /// The merchant (`merch_…`) it belongs to; `None` for the account's own.
    pub merchant_id: Option<String>,
    /// ISO 3166-1 alpha-2 country, upper case.
    pub country: String,
    /// The region (state, province) without the country, upper case; empty for a
    /// registration with the whole country.
    pub region: String,
    /// The local (home-rule) jurisdictions, by the rate table's jurisdiction code, the
    /// registration also covers; empty: every local jurisdiction of the region.
    pub locals: Vec<String>,
    /// What it lets the account collect.
    pub kind: RegistrationKind,
    /// Epoch seconds from which it is active.
    pub active_from: i64,
    /// Epoch seconds from which it is no longer active; `None`: open-ended.
    pub expires_at: Option<i64>,
    /// Epoch seconds.
    pub created_at: i64,
    /// Epoch seconds of the last change.
    pub updated_at: i64,
}

impl RegistrationRecord {
    /// Whether it is active at `at`: `active_from <= at < expires_at`.
    pub fn active_at(&self, at: i64) -> bool {
        self.active_from <= at && self.expires_at.is_none_or(|e| at < e)
    }
}

/// Which registrations a list shows: all of the scope, or those of one country (and
/// region).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RegistrationFilter {
    /// Only this country's (upper case).
    pub country: Option<String>,
    /// Only this region's (upper case).
    pub region: Option<String>,
}

impl RegistrationFilter {
    /// The countries it shows, as a SQL `LIKE` pattern (`%` for all).
    pub fn country_pattern(&self) -> &str {
        self.country.as_deref().unwrap_or("%")
    }

    /// The regions it shows, as a SQL `LIKE` pattern (`%` for all).
    pub fn region_pattern(&self) -> &str {
        self.region.as_deref().unwrap_or("%")
    }
}
