//! `calculate_batch`: a one-line sale per row of an Arrow table, calculated in chunks over
//! the machine's cores, row for row into Arrow.

pub mod input;
pub mod output;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use arrow_array::{ArrayRef, RecordBatch, UInt32Array};
use arrow_schema::{Field, Schema, SchemaRef};
use levy_core::{AnyTable, Date, SaleLine, TaxCodeId};

use crate::sale::{self, Product, Worker};
use input::{Columns, Plan, RowBufs, RowError, INTERNAL_ERROR};
use output::{Entries, JurisdictionsOut, Money, SalesOut, Vocab};

/// Rows a thread takes at a time: large enough that a chunk's setup is noise, small enough
/// that two threads finish together.
pub const CHUNK: usize = 64 * 1024;

/// What the caller asked for.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Also the long table of jurisdictions.
    pub jurisdictions: bool,
    /// Input columns copied into the outputs (an id, say).
    pub keep: Vec<String>,
    /// Threads; 0 for one per core.
    pub threads: usize,
    /// Every coverage short of `FULL` is an error for its row (`COVERAGE_NOT_FULL`).
    pub strict: bool,
    /// The day of rows without one (a null `date`, or no `date` column); without it such
    /// a row is an error (`DATE_MISSING`).
    pub default_date: Option<Date>,
}

/// Why the input as a whole cannot be calculated (a bad row never is).
#[derive(Debug)]
pub enum BatchError {
    /// A column of the wrong type (`TypeError`).
    Type(String),
    /// A missing column or a bad option (`ValueError`).
    Value(String),
    /// A panic inside levy (`levy_tax.InternalError`).
    Internal(String),
}

/// The schemas of the outputs, for an input of `schema`.
pub struct Shapes {
    plan: Plan,
    keep: Vec<usize>,
    money: Money,
    /// Of the sales output.
    pub sales: SchemaRef,
    /// Of the jurisdictions output.
    pub jurisdictions: SchemaRef,
}

impl Shapes {
    /// Checks `schema` and `keep` (and that a `date` column is given when `default_date`
    /// is not).
    pub fn new(schema: &Schema, keep: &[String], default_date: bool) -> Result<Shapes, BatchError> {
        let plan = Plan::new(schema, keep, default_date).map_err(|e| match e {
            input::SchemaError::Type(m) => BatchError::Type(m),
            input::SchemaError::Value(m) => BatchError::Value(m),
        })?;
        let mut indices = Vec::with_capacity(keep.len());
        let mut fields: Vec<Field> = Vec::with_capacity(keep.len());
        for name in keep {
            let i = schema
                .index_of(name)
                .map_err(|_| BatchError::Value(format!("keep: no column {name:?} in the input")))?;
            let f = schema.field(i);
            if fields.iter().any(|k| k.name() == f.name()) {
                return Err(BatchError::Value(format!("keep: {name:?} is named twice")));
            }
            indices.push(i);
            fields.push(f.clone().with_nullable(true));
        }
        let money = Money::of(plan.unit);
        let sales = output::sales_schema(money, &fields);
        let jurisdictions = output::jurisdictions_schema(&fields);
        let clash = |s: &SchemaRef, extra: usize| {
            s.fields()
                .iter()
                .skip(extra)
                .skip(fields.len())
                .find(|f| fields.iter().any(|k| k.name() == f.name()))
                .map(|f| f.name().clone())
        };
        if let Some(name) = clash(&sales, 0).or_else(|| clash(&jurisdictions, 1)) {
            return Err(BatchError::Value(format!(
                "keep: {name:?} is also an output column; rename it first"
            )));
        }
        Ok(Shapes {
            plan,
            keep: indices,
            money,
            sales,
            jurisdictions,
        })
    }
}

/// The outputs.
pub struct Outputs {
    /// One row per input row.
    pub sales: Vec<RecordBatch>,
    /// One row per jurisdiction of each calculated row, when asked for.
    pub jurisdictions: Vec<RecordBatch>,
}

/// A run of rows of one input batch.
#[derive(Clone, Copy)]
struct Chunk {
    batch: usize,
    offset: usize,
    len: usize,
    /// Row of the whole input the chunk starts at.
    first: i64,
}

fn chunks(batches: &[RecordBatch]) -> Vec<Chunk> {
    let mut out = Vec::new();
    let mut first = 0i64;
    for (b, batch) in batches.iter().enumerate() {
        let mut offset = 0;
        while offset < batch.num_rows() {
            let len = CHUNK.min(batch.num_rows() - offset);
            out.push(Chunk {
                batch: b,
                offset,
                len,
                first,
            });
            offset += len;
            first += len as i64;
        }
    }
    out
}

/// Everything a chunk needs, shared by the threads.
struct Job<'a> {
    table: &'a AnyTable,
    shapes: &'a Shapes,
    vocab: &'a Vocab,
    opts: &'a Options,
}

type ChunkOut = (RecordBatch, Option<RecordBatch>);

/// The message of a caught panic.
pub fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".into()
    }
}

/// The last product looked up, and its tax code: a column of one category, or runs of one,
/// search the table once.
struct ProductCache {
    name: String,
    category: bool,
    code: Option<TaxCodeId>,
}

impl ProductCache {
    fn lookup(&mut self, table: &AnyTable, product: Product<'_>) -> Result<TaxCodeId, String> {
        let category = matches!(product, Product::Category(_));
        if let Some(code) = self.code {
            if self.category == category && self.name == product.name() {
                return Ok(code);
            }
        }
        let code = product.lookup(table)?;
        self.name.clear();
        self.name.push_str(product.name());
        self.category = category;
        self.code = Some(code);
        Ok(code)
    }
}

impl Job<'_> {
    /// Calculates one row into the worker.
    #[inline]
    fn row(
        &self,
        cols: &Columns,
        i: usize,
        worker: &mut Worker<'_>,
        bufs: &mut RowBufs,
        products: &mut ProductCache,
    ) -> Result<bool, RowError> {
        let row = cols.row(i, bufs)?;
        let tax_code = products
            .lookup(self.table, row.product)
            .map_err(RowError::of(levy_core::QuoteErrorKind::UnknownProduct))?;
        let lines = worker.lines();
        lines.clear();
        lines.push(SaleLine {
            amount: row.amount,
            quantity: row.quantity,
            per_unit: false,
            tax_code,
        });
        let refund = row.refund;
        worker.calculate(&row.terms).map_err(|e| RowError {
            code: e.kind.name(),
            message: e.message,
        })?;
        Ok(refund)
    }

    /// The rows of `chunk` into the outputs one at a time, each under its own panic guard,
    /// so that a panic costs its row alone (as an error): the way a chunk is calculated
    /// again after a panic in [`Job::rows_windowed`].
    fn rows_guarded(
        &self,
        cols: &Columns,
        chunk: Chunk,
        sales: &mut SalesOut,
        jur: &mut Option<JurisdictionsOut>,
    ) {
        let mut worker = Worker::new(self.table);
        let mut bufs = RowBufs::new();
        let mut products = ProductCache {
            name: String::new(),
            category: true,
            code: None,
        };
        let mut entries: Entries = Vec::new();
        for k in 0..chunk.len {
            let i = chunk.offset + k;
            let done = catch_unwind(AssertUnwindSafe(|| {
                self.row(cols, i, &mut worker, &mut bufs, &mut products)
            }))
            .unwrap_or_else(|p| {
                // The worker may be half-way through a sale: start a new one.
                worker = Worker::new(self.table);
                Err(RowError {
                    code: INTERNAL_ERROR,
                    message: format!(
                        "internal error in levy (a bug: please report it with this row): {}",
                        panic_message(p.as_ref())
                    ),
                })
            });
            match (done, worker.calc()) {
                (Ok(refund), Some(calc)) => sales.push(
                    self.vocab,
                    &worker.location,
                    calc,
                    refund,
                    jur.as_mut().map(|j| (j, chunk.first + k as i64, k as u32)),
                    &mut entries,
                ),
                (Ok(_), None) => {
                    sales.push_error(INTERNAL_ERROR, "internal error in levy: no calculation")
                }
                (Err(e), _) => sales.push_error(e.code, &e.message),
            }
        }
    }

    /// The rows of `chunk` into the outputs, a window at a time: the window's rows read into
    /// orders first, then quoted together through the front door ([`sale::Batch`], whose
    /// core batch fetches each sale's table records ahead of it), then written in order.
    fn rows_windowed(
        &self,
        cols: &Columns,
        chunk: Chunk,
        sales: &mut SalesOut,
        jur: &mut Option<JurisdictionsOut>,
    ) {
        let table = self.table;
        let mut win = Window::new(table);
        let mut bufs = RowBufs::new();
        let mut products = ProductCache {
            name: String::new(),
            category: true,
            code: None,
        };
        let mut entries: Entries = Vec::new();
        let mut start = 0;
        while start < chunk.len {
            let n = WINDOW.min(chunk.len - start);
            // read every row of the window into its order
            let mut m = 0;
            for k in 0..n {
                let i = chunk.offset + start + k;
                win.state[k] = win.prepare(m, cols, i, &mut bufs, &mut products);
                if matches!(win.state[k], Slot::Batch(..)) {
                    m += 1;
                }
            }
            // quote them together through the front door
            for (j, e) in win.batch.quote(table, m) {
                if let Some(k) = win.batch_row(j, n) {
                    win.state[k] = Slot::Error(RowError {
                        code: e.kind.name(),
                        message: e.message,
                    });
                }
            }
            // write in order
            for k in 0..n {
                let row = start + k;
                let jur = jur
                    .as_mut()
                    .map(|o| (o, chunk.first + row as i64, row as u32));
                match &win.state[k] {
                    Slot::Batch(j, refund) => match win.batch.location(*j) {
                        Some(location) => sales.push(
                            self.vocab,
                            location,
                            &win.batch.calcs[*j],
                            *refund,
                            jur,
                            &mut entries,
                        ),
                        None => {
                            sales.push_error(INTERNAL_ERROR, "internal error in levy: no place")
                        }
                    },
                    Slot::Error(e) => sales.push_error(e.code, &e.message),
                }
            }
            start += n;
        }
    }

    /// One chunk: its rows calculated and written; a panic anywhere in it calculates the
    /// chunk again a row at a time, each under a guard.
    fn chunk(&self, batches: &[RecordBatch], chunk: Chunk) -> Result<ChunkOut, BatchError> {
        let batch = batches[chunk.batch].slice(chunk.offset, chunk.len);
        let local = Chunk { offset: 0, ..chunk };
        let cols = Columns::new(&self.shapes.plan, &batch, self.opts.default_date)
            .map_err(BatchError::Value)?;
        let money = self.shapes.money;
        let fresh = || {
            (
                SalesOut::new(money, chunk.len, self.opts.strict),
                self.opts
                    .jurisdictions
                    .then(|| JurisdictionsOut::new(money, chunk.len * 4)),
            )
        };
        let (mut sales, mut jur) = fresh();
        let fast = catch_unwind(AssertUnwindSafe(|| {
            self.rows_windowed(&cols, local, &mut sales, &mut jur)
        }));
        if fast.is_err() {
            (sales, jur) = fresh();
            self.rows_guarded(&cols, local, &mut sales, &mut jur);
        }
        let kept: Vec<ArrayRef> = self
            .shapes
            .keep
            .iter()
            .map(|&i| Arc::clone(batch.column(i)))
            .collect();
        let sales_batch = sales
            .finish(&self.shapes.sales, self.vocab, kept.clone())
            .map_err(BatchError::Internal)?;
        let jur_batch = match jur.as_mut() {
            None => None,
            Some(j) => {
                let idx = UInt32Array::from(std::mem::take(&mut j.local));
                let taken = kept
                    .iter()
                    .map(|a| arrow_select::take::take(a.as_ref(), &idx, None))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| BatchError::Internal(e.to_string()))?;
                Some(
                    j.finish(&self.shapes.jurisdictions, self.vocab, taken)
                        .map_err(BatchError::Internal)?,
                )
            }
        };
        Ok((sales_batch, jur_batch))
    }
}

/// Rows calculated together by the core's batch.
const WINDOW: usize = 256;

/// What became of a row of a window.
enum Slot {
    /// Read into the window's order of this index, quoted with the others; a refund when
    /// the flag is set.
    Batch(usize, bool),
    /// Not calculated.
    Error(RowError),
}

/// The buffers of a window of rows, reused from window to window.
struct Window<'t> {
    table: &'t AnyTable,
    batch: sale::Batch,
    state: Vec<Slot>,
}

impl<'t> Window<'t> {
    fn new(table: &'t AnyTable) -> Window<'t> {
        Window {
            table,
            batch: sale::Batch::new(),
            state: (0..WINDOW)
                .map(|_| {
                    Slot::Error(RowError {
                        code: INTERNAL_ERROR,
                        message: String::new(),
                    })
                })
                .collect(),
        }
    }

    /// Reads row `i` into the window's order `m`: ready to quote, or an error.
    fn prepare(
        &mut self,
        m: usize,
        cols: &Columns,
        i: usize,
        bufs: &mut RowBufs,
        products: &mut ProductCache,
    ) -> Slot {
        let row = match cols.row(i, bufs) {
            Ok(r) => r,
            Err(e) => return Slot::Error(e),
        };
        let tax_code = match products.lookup(self.table, row.product) {
            Ok(c) => c,
            Err(e) => {
                return Slot::Error(RowError::new(levy_core::QuoteErrorKind::UnknownProduct, e))
            }
        };
        let orders = &mut self.batch.orders;
        if orders.len() == m {
            orders.push(levy_core::Order::new());
        }
        let order = &mut orders[m];
        sale::fill_order(order, &row.terms);
        order.sale.lines.clear();
        order.sale.lines.push(SaleLine {
            amount: row.amount,
            quantity: row.quantity,
            per_unit: false,
            tax_code,
        });
        Slot::Batch(m, row.refund)
    }

    /// The window row whose order is the `j`-th quoted.
    fn batch_row(&self, j: usize, n: usize) -> Option<usize> {
        (0..n).find(|&k| matches!(self.state[k], Slot::Batch(x, _) if x == j))
    }
}

/// The number of threads to use for `chunks` chunks.
fn thread_count(asked: usize, chunks: usize) -> usize {
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let n = if asked == 0 { cores } else { asked };
    n.clamp(1, chunks.max(1))
}

/// Calculates every row of `batches` (of the schema `shapes` was made for).
pub fn run(
    table: &AnyTable,
    shapes: &Shapes,
    batches: &[RecordBatch],
    opts: &Options,
) -> Result<Outputs, BatchError> {
    let vocab = Vocab::new(table, opts.jurisdictions);
    let job = Job {
        table,
        shapes,
        vocab: &vocab,
        opts,
    };
    let chunks = chunks(batches);
    let results: Vec<Mutex<Option<Result<ChunkOut, BatchError>>>> =
        chunks.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let work = || loop {
        let k = next.fetch_add(1, Ordering::Relaxed);
        let Some(&chunk) = chunks.get(k) else { break };
        let out = catch_unwind(AssertUnwindSafe(|| job.chunk(batches, chunk)))
            .unwrap_or_else(|p| Err(BatchError::Internal(panic_message(p.as_ref()))));
        if let Ok(mut slot) = results[k].lock() {
            *slot = Some(out);
        }
    };
    let threads = thread_count(opts.threads, chunks.len());
    if threads == 1 {
        work();
    } else {
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(work);
            }
        });
    }
    let mut outputs = Outputs {
        sales: Vec::with_capacity(chunks.len()),
        jurisdictions: Vec::new(),
    };
    for slot in results {
        let out = slot
            .into_inner()
            .ok()
            .flatten()
            .ok_or_else(|| BatchError::Internal("a chunk was not calculated".into()))??;
        outputs.sales.push(out.0);
        if let Some(j) = out.1 {
            outputs.jurisdictions.push(j);
        }
    }
    Ok(outputs)
}
