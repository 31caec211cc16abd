//! Arrow in and out through the Arrow PyCapsule interface: any object with
//! `__arrow_c_stream__` (a pyarrow Table or RecordBatchReader, a Polars DataFrame, a DuckDB
//! relation, a pandas DataFrame) or `__arrow_c_array__` (a pyarrow RecordBatch) is read
//! without pyarrow on this side; results leave as a stream capsule that pyarrow, Polars and
//! DuckDB import without a copy.

use std::ffi::CStr;
use std::sync::Arc;

use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::ffi_stream::{FFI_ArrowArrayStream, RecordBatchStreamReader};
use arrow_array::{Array, RecordBatch, RecordBatchIterator, RecordBatchReader, StructArray};
use arrow_schema::{ArrowError, SchemaRef};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyTuple};

const STREAM: &CStr = c"arrow_array_stream";
const ARRAY: &CStr = c"arrow_array";
const SCHEMA: &CStr = c"arrow_schema";

/// An Arrow stream taken from a Python object, not yet read: its batches are read (with the
/// GIL released) by [`InputStream::read_all`].
pub struct InputStream(RecordBatchStreamReader);

/// Batches read whole.
pub struct Batches {
    /// The schema every batch has.
    pub schema: SchemaRef,
    /// The batches, in order.
    pub batches: Vec<RecordBatch>,
}

impl InputStream {
    /// Reads every batch. The producer's `get_next` runs here; call it with the GIL
    /// released (producers backed by Python code take the GIL themselves).
    pub fn read_all(self) -> Result<Batches, ArrowError> {
        let schema = self.0.schema();
        let batches = self.0.collect::<Result<Vec<_>, _>>()?;
        Ok(Batches { schema, batches })
    }
}

/// What `data` holds, as Arrow: a stream to read, or one batch already imported.
pub enum Input {
    /// From `__arrow_c_stream__`.
    Stream(InputStream),
    /// From `__arrow_c_array__` (a record batch or a struct array).
    Batch(Batches),
}

impl Input {
    /// Every batch (reading the stream, when it is one).
    pub fn read_all(self) -> Result<Batches, ArrowError> {
        match self {
            Input::Stream(s) => s.read_all(),
            Input::Batch(b) => Ok(b),
        }
    }
}

fn expected_arrow(data: &Bound<'_, PyAny>) -> PyErr {
    let kind = data
        .get_type()
        .fully_qualified_name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into());
    PyTypeError::new_err(format!(
        "expected Arrow data (an object with __arrow_c_stream__ or __arrow_c_array__: a pyarrow \
         Table, RecordBatch or RecordBatchReader, a Polars DataFrame, a DuckDB relation, a \
         pandas DataFrame), got {kind}; for a dict of columns, pass pyarrow.table(the_dict)"
    ))
}

/// Takes the Arrow data out of `data` (the GIL held: the producer's Python method runs).
pub fn take(data: &Bound<'_, PyAny>) -> PyResult<Input> {
    if data.hasattr("__arrow_c_stream__")? {
        let capsule = data.call_method0("__arrow_c_stream__")?;
        let capsule = capsule.cast::<PyCapsule>().map_err(|_| {
            PyTypeError::new_err("__arrow_c_stream__ returned something other than a PyCapsule")
        })?;
        let ptr = capsule.pointer_checked(Some(STREAM))?;
        // SAFETY: a capsule named "arrow_array_stream" holds an ArrowArrayStream (the
        // PyCapsule interface's contract); `from_raw` moves the stream out and leaves a
        // released one behind, which the capsule's destructor then skips.
        let reader = unsafe { RecordBatchStreamReader::from_raw(ptr.as_ptr().cast()) }
            .map_err(|e| PyValueError::new_err(format!("reading the Arrow stream: {e}")))?;
        return Ok(Input::Stream(InputStream(reader)));
    }
    if data.hasattr("__arrow_c_array__")? {
        let pair = data.call_method0("__arrow_c_array__")?;
        let pair = pair.cast::<PyTuple>().map_err(|_| {
            PyTypeError::new_err("__arrow_c_array__ returned something other than a tuple")
        })?;
        if pair.len() != 2 {
            return Err(PyTypeError::new_err(
                "__arrow_c_array__ returned a tuple of other than two capsules",
            ));
        }
        let schema_capsule = pair.get_item(0)?;
        let array_capsule = pair.get_item(1)?;
        let schema_capsule = schema_capsule
            .cast::<PyCapsule>()
            .map_err(|_| PyTypeError::new_err("__arrow_c_array__: the schema is no capsule"))?;
        let array_capsule = array_capsule
            .cast::<PyCapsule>()
            .map_err(|_| PyTypeError::new_err("__arrow_c_array__: the array is no capsule"))?;
        let schema_ptr = schema_capsule.pointer_checked(Some(SCHEMA))?;
        let array_ptr = array_capsule.pointer_checked(Some(ARRAY))?;
        // SAFETY: the capsules hold an ArrowSchema and an ArrowArray (the interface's
        // contract). The array is moved out (its release left null, so the capsule's
        // destructor skips it); the schema is only borrowed, the capsule keeps owning it.
        let data = unsafe {
            let array = FFI_ArrowArray::from_raw(array_ptr.as_ptr().cast());
            let schema: &FFI_ArrowSchema = &*schema_ptr.as_ptr().cast::<FFI_ArrowSchema>();
            arrow_array::ffi::from_ffi(array, schema)
        }
        .map_err(|e| PyValueError::new_err(format!("reading the Arrow array: {e}")))?;
        let array = arrow_array::make_array(data);
        let Some(structs) = array.as_any().downcast_ref::<StructArray>() else {
            return Err(PyTypeError::new_err(format!(
                "expected a table or record batch, got one Arrow array of type {}: \
                 pass a table with named columns",
                array.data_type()
            )));
        };
        let batch = RecordBatch::from(structs.clone());
        return Ok(Input::Batch(Batches {
            schema: batch.schema(),
            batches: vec![batch],
        }));
    }
    Err(expected_arrow(data))
}

/// Batches on their way out: a Python object with `__arrow_c_stream__`, which
/// `pyarrow.table(...)`, `polars.DataFrame(...)` and DuckDB read without copying. It may be
/// read any number of times (each read shares the same buffers).
#[pyclass(module = "levy_tax._levy", frozen, name = "ArrowBatches")]
pub struct ArrowBatches {
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
}

impl ArrowBatches {
    /// Batches of one schema.
    pub fn new(schema: SchemaRef, batches: Vec<RecordBatch>) -> ArrowBatches {
        ArrowBatches { schema, batches }
    }
}

#[pymethods]
impl ArrowBatches {
    /// The Arrow PyCapsule interface: a new stream over the batches. A requested schema is
    /// not honoured (the batches keep their own), as the interface allows.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let reader = RecordBatchIterator::new(
            self.batches.clone().into_iter().map(Ok),
            Arc::clone(&self.schema),
        );
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        // The capsule owns the stream; a consumer moves it out and leaves a released one,
        // which dropping skips.
        PyCapsule::new_with_value(py, stream, STREAM)
    }

    /// The Arrow PyCapsule interface: the schema.
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        let schema = FFI_ArrowSchema::try_from(self.schema.as_ref())
            .map_err(|e| PyValueError::new_err(format!("exporting the schema: {e}")))?;
        PyCapsule::new_with_value(py, schema, SCHEMA)
    }

    /// Rows in all.
    fn __len__(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }

    fn __repr__(&self) -> String {
        format!(
            "ArrowBatches({} rows in {} batches, {} columns)",
            self.__len__(),
            self.batches.len(),
            self.schema.fields().len()
        )
    }
}
