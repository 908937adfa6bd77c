//! The evaluator session for JavaScript (wasm-bindgen). The TypeScript SDK owns the WebSocket
//! and the Web Worker; this module is the sans-IO core it drives: frames in, frames out.
//!
//! Structured data crosses as JSON strings (catalog, events, progress, errors), frames and
//! input bits as byte arrays. Errors are thrown as `Error`s whose message is the JSON of
//! [`ErrorReport`](crate::protocol::ErrorReport): `{"kind": "input" | "protocol" | "remote" |
//! "cheating", "code": "<wire code's name>", "wireCode": n, "reason": "<check>", "message": "…",
//! "fields": {…}}`; the SDK's `fromCoreError` turns it into its error classes.

// The browser's session must never run the fuzzing build's seeded random source and insecure
// base OT (`crate::random`).
#[cfg(fuzzing)]
compile_error!("the WebAssembly evaluator cannot be built with cfg(fuzzing): that build's randomness is predictable and its base OT insecure");

use crate::ahead::{Ahead, Post, Skips};
use crate::garble::Garbling;
use crate::protocol::{Clock, ErrorCode, ErrorKind, ErrorReport, EvaluatorConfig, EvaluatorEvent, EvaluatorSession, Security, SessionError};
use serde_json::json;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// `performance.now()`, available in windows and workers alike.
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;

    /// The page's function that hands its OT helper worker a job (`claimed` false) or a notice
    /// of positions claimed (`claimed` true: for `noteAheadClaimed` there).
    #[wasm_bindgen(typescript_type = "(bytes: Uint8Array, claimed: boolean) => void")]
    pub type PostAheadJob;

    #[wasm_bindgen(method, catch, js_name = call)]
    fn call(this: &PostAheadJob, this_arg: &JsValue, bytes: Vec<u8>, claimed: bool) -> Result<JsValue, JsValue>;
}

thread_local! {
    /// Each session's function that posts its jobs ahead, by the session's number: the hub
    /// ([`crate::ahead`]) is shared the way threads share it, and a JavaScript function cannot
    /// be, so the hub's poster holds the number and finds the function here (WebAssembly runs
    /// this module on one thread).
    static POSTERS: RefCell<BTreeMap<u64, PostAheadJob>> = const { RefCell::new(BTreeMap::new()) };
    static NEXT_POSTER: Cell<u64> = const { Cell::new(0) };
}

/// Registers `post` for a new session: the hub that calls it, and the number to remove it by.
fn ahead_posting_to(post: PostAheadJob) -> (Arc<Ahead>, u64) {
    let id = NEXT_POSTER.with(|n| n.replace(n.get() + 1));
    POSTERS.with(|posters| posters.borrow_mut().insert(id, post));
    let hub = Ahead::new(Box::new(move |posted| POSTERS.with(|posters| {
        if let Some(post) = posters.borrow().get(&id) {
            let (bytes, claimed) = match posted {
                Post::Job(job) => (job, false),
                Post::Claimed(notice) => (notice, true),
            };
            // A function that throws loses the job (the session does that work itself) or the
            // notice (the helper runs jobs whose results will be dropped).
            let _ = post.call(&JsValue::UNDEFINED, bytes, claimed);
        }
    })));
    (hub, id)
}

/// Wall time from `performance.now()`, and for CPU time the time spent inside this session's
/// calls ([`Busy`]): JavaScript exposes no CPU clock of a thread, and the engine's thread does
/// nothing else but run those calls and wait, so their time is the CPU time it spent on the
/// session (without the OT helper worker's work — its share of the base OTs, the OT streams it
/// expands ahead — and without what the thread lost to other processes, which only a real CPU
/// clock could leave out).
struct PerformanceClock {
    busy: Rc<Busy>,
}

impl Clock for PerformanceClock {
    fn now_ms(&self) -> f64 {
        performance_now()
    }
    fn cpu_ms(&self) -> Option<f64> {
        Some(self.busy.total_ms())
    }
}

/// Milliseconds spent inside the session's calls so far, the current one included.
#[derive(Default)]
struct Busy {
    done_ms: Cell<f64>,
    /// When the call under way began.
    since: Cell<Option<f64>>,
}

impl Busy {
    fn total_ms(&self) -> f64 {
        self.done_ms.get() + self.since.get().map_or(0.0, |start| performance_now() - start)
    }

    /// Counts the time until the guard is dropped.
    fn enter(self: &Rc<Self>) -> BusyGuard {
        self.since.set(Some(performance_now()));
        BusyGuard(self.clone())
    }
}

struct BusyGuard(Rc<Busy>);

impl Drop for BusyGuard {
    fn drop(&mut self) {
        if let Some(start) = self.0.since.take() {
            self.0.done_ms.set(self.0.done_ms.get() + (performance_now() - start));
        }
    }
}

fn js_error(e: &SessionError) -> JsError {
    JsError::new(&e.report().to_json())
}

#[wasm_bindgen]
pub struct WasmEvaluator {
    session: EvaluatorSession,
    busy: Rc<Busy>,
    /// The OT helper worker's jobs, where the page has one ([`crate::ahead`]), and its poster's
    /// number in `POSTERS`.
    ahead: Option<(Arc<Ahead>, u64)>,
}

impl Drop for WasmEvaluator {
    fn drop(&mut self) {
        if let Some((_, id)) = self.ahead {
            POSTERS.with(|posters| posters.borrow_mut().remove(&id));
        }
    }
}

#[wasm_bindgen]
impl WasmEvaluator {
    /// A new session asking for a credit window of `window` bytes, letting it grow to at most
    /// `max_window` bytes (the default: [`EvaluatorConfig`]'s; never below `window`), and
    /// accepting the garbling schemes `garbling` names ("half-gates", "three-halves" or "auto",
    /// the default: the server's offer decides). Its first frame (the hello) is ready in
    /// `pollTransmit`. With `post_ahead`, another worker of the page works ahead on the OT
    /// extension (the streams' sums, whole chunks of random choices): the session calls
    /// `post_ahead` with each job for it (`runAheadJob` there; even in the middle of a call, so
    /// the function must only pass the job on) and with each notice of positions it has claimed
    /// (`noteAheadClaimed` there, ahead of the jobs queued), and `supplyAhead` takes the results.
    #[wasm_bindgen(constructor)]
    pub fn new(window: u32, garbling: Option<String>, max_window: Option<u32>, post_ahead: Option<PostAheadJob>) -> Result<WasmEvaluator, JsError> {
        let defaults = EvaluatorConfig::default();
        let ahead = post_ahead.map(ahead_posting_to);
        let threads = match &ahead {
            Some((hub, _)) => defaults.threads.clone().with_ahead(hub.clone()),
            None => defaults.threads.clone(),
        };
        let config = EvaluatorConfig { window, max_window: max_window.unwrap_or(defaults.max_window), threads, ..defaults };
        let garbling = match garbling.as_deref() {
            None => Garbling::Auto,
            Some(name) => Garbling::from_name(name).ok_or_else(|| JsError::new(&format!("unknown garbling scheme {name:?}: half-gates, three-halves or auto")))?,
        };
        let busy = Rc::new(Busy::default());
        let session = EvaluatorSession::with_garbling(config, garbling, Box::new(PerformanceClock { busy: busy.clone() })).map_err(|e| js_error(&e))?;
        Ok(WasmEvaluator { session, busy, ahead })
    }

    /// The garbling scheme the hellos settled ("half-gates" or "three-halves").
    pub fn scheme(&self) -> String {
        self.session.scheme().name().to_string()
    }

    /// Handles one frame from the server.
    pub fn handle(&mut self, frame: &[u8]) -> Result<(), JsError> {
        let _busy = self.busy.enter();
        self.session.handle(frame).map_err(|e| js_error(&e))
    }

    /// The next frame to send, if any. After a computation's request this is where the base
    /// OTs and the OT extension run; their failure throws, and the session is closed (the
    /// `Error` frame for the server comes from the next call).
    #[wasm_bindgen(js_name = pollTransmit)]
    pub fn poll_transmit(&mut self) -> Result<Option<Vec<u8>>, JsError> {
        let _busy = self.busy.enter();
        self.session.poll_transmit().map_err(|e| js_error(&e))
    }

    /// Whether the next `pollTransmit` will do deferred work (the base OTs, the OT extension, an
    /// authenticated segment's first round): yield to the event loop first, so that the frames
    /// already sent leave while it computes.
    #[wasm_bindgen(js_name = hasDeferredWork)]
    pub fn has_deferred_work(&self) -> bool {
        self.session.has_deferred_work()
    }

    /// The next event as JSON: `{"type":"ready"}` or `{"type":"finished", "service", "outputs",
    /// "stats", "security", "recovered", "phase", "prepared"}` — `security` the mode the computation ran in
    /// ("standard", "cut-and-choose" or "authenticated"), `recovered` whether its evaluation circuits disagreed
    /// (the server cheated) and the output came through cheating recovery, `phase` "whole",
    /// "prepare" (a preparation run: no outputs) or "prepared", and `prepared` whether the
    /// computation used preprocessing done ahead.
    #[wasm_bindgen(js_name = pollEvent)]
    pub fn poll_event(&mut self) -> Option<String> {
        let event = self.session.poll_event()?;
        Some(match event {
            EvaluatorEvent::Ready => json!({ "type": "ready" }).to_string(),
            EvaluatorEvent::Finished(r) => {
                let outputs: Vec<_> = r
                    .outputs
                    .iter()
                    .map(|o| json!({ "name": o.name, "hex": garblet_circuits::value::to_hex(&o.bits), "bits": o.bits.len(), "signed": o.signed, "bytes": o.bytes }))
                    .collect();
                json!({ "type": "finished", "service": r.service, "outputs": outputs, "stats": { "evaluator": r.evaluator, "garbler": r.garbler }, "security": r.security.name(), "recovered": r.recovered, "phase": r.phase.name(), "prepared": matches!(r.phase, crate::protocol::Phase::Prepared { .. }) }).to_string()
            }
        })
    }

    /// The server's catalog (JSON), once ready.
    pub fn catalog(&self) -> Option<String> {
        self.session.catalog_json().map(str::to_string)
    }

    /// The inputs and outputs of `service` with the client parameters `params` (a JSON object
    /// of integers), as JSON — what `start` will expect — and `circuit`, the identity of the
    /// exact circuit they resolve to (`sha256:` and 64 hex digits: a built-in program's name,
    /// parameters and library version hashed, or a streamed circuit's topology hash, which the
    /// session checks the streamed gates against), for a page that pins it.
    pub fn shape(&self, service: &str, params: &str) -> Result<String, JsError> {
        let catalog = self.session.catalog().ok_or_else(|| js_error(&SessionError::NotReady { state: "awaiting the server's hello" }))?;
        let params = parse_params(params)?;
        let resolved = catalog.service(service).and_then(|s| s.resolve(&params)).map_err(|e| js_error(&e.into()))?;
        let inputs: Vec<_> = resolved.shape.inputs.iter().map(crate::protocol::catalog::FieldInfo::from_field).collect();
        let outputs: Vec<_> = resolved.shape.outputs.iter().map(crate::protocol::catalog::OutputInfo::from_field).collect();
        let circuit = format!("sha256:{}", crate::protocol::catalog::hex(&resolved.circuit_id));
        Ok(json!({ "inputs": inputs, "outputs": outputs, "circuit": circuit }).to_string())
    }

    /// Starts a computation. `bits` holds `bitCount` input bits packed LSB first: the
    /// evaluator's fields concatenated in order. `security` is the mode ("standard", the
    /// default, "cut-and-choose" or "authenticated"); another name throws, and a service that offers less than
    /// the mode asked for throws `security-not-offered` (kind `input`: nothing was sent).
    pub fn start(&mut self, service: &str, params: &str, bits: &[u8], bit_count: usize, security: Option<String>) -> Result<(), JsError> {
        let security = match security.as_deref() {
            None => Security::Standard,
            Some(name) => Security::from_name(name).ok_or_else(|| unknown_security(name))?,
        };
        if bits.len() * 8 < bit_count {
            return Err(js_error(&SessionError::PackedBits { bits: bit_count as u64, bytes: bits.len() as u64 }));
        }
        let params = parse_params(params)?;
        let inputs = (0..bit_count).map(|i| (bits[i / 8] >> (i % 8)) & 1 == 1).collect();
        let _busy = self.busy.enter();
        self.session.start_with(service, params, inputs, security).map_err(|e| js_error(&e))
    }

    /// Runs the set-up and preprocessing of a computation of `service` with `params` (a JSON
    /// object of integers) in the authenticated mode, which need no input, and parks it on the
    /// session: the next `start` of the same service and parameters in that mode uses it. The
    /// run ends with a `finished` event without outputs, its `phase` "prepare". A service that
    /// does not offer the authenticated mode throws `security-not-offered`, and a preparation
    /// past what the session holds prepared ahead (`EvaluatorConfig::max_prepared_and_gates`)
    /// throws `prepared-limit` (kind `input`, code `limit`); nothing was sent.
    pub fn prepare(&mut self, service: &str, params: &str) -> Result<(), JsError> {
        let params = parse_params(params)?;
        let _busy = self.busy.enter();
        self.session.prepare(service, params).map_err(|e| js_error(&e))
    }

    /// `{"andGates", "andTotal" (or null), "bytesReceived", "bytesConsumed"}`.
    pub fn progress(&self) -> String {
        let p = self.session.progress();
        json!({ "andGates": p.and_gates, "andTotal": p.and_total, "bytesReceived": p.bytes_received, "bytesConsumed": p.bytes_consumed }).to_string()
    }

    /// Ends the session from this side (the user cancelled): the `Error` frame for the server,
    /// with the code `cancelled`, is what the next `pollTransmit` returns.
    pub fn abort(&mut self, message: &str) {
        self.session.abort(ErrorCode::Cancelled, message)
    }

    #[wasm_bindgen(js_name = isClosed)]
    pub fn is_closed(&self) -> bool {
        self.session.is_closed()
    }

    /// Which AES engine the evaluator hashes with.
    #[wasm_bindgen(js_name = aesEngine)]
    pub fn aes_engine(&self) -> String {
        self.session.aes_engine().into()
    }

    /// Hands the last `count` base OTs' multiplications to another worker of this page: the
    /// job for `runBaseOtShare` (it holds a secret scalar: it must not leave the page), or
    /// undefined when there is nothing to share.
    #[wasm_bindgen(js_name = takeBaseOtShare)]
    pub fn take_base_ot_share(&mut self, count: usize) -> Option<Vec<u8>> {
        self.session.take_base_ot_share(count)
    }

    /// What `runBaseOtShare` returned for the shared job.
    #[wasm_bindgen(js_name = completeBaseOtShare)]
    pub fn complete_base_ot_share(&mut self, products: &[u8]) -> Result<(), JsError> {
        let _busy = self.busy.enter();
        self.session.complete_base_ot_share(products).map_err(|e| js_error(&e))
    }

    /// What `runAheadJob` returned for a job the session posted (jobs hold the secret seeds of
    /// the OT extension's streams, results their sums or a chunk's secret choice bits: neither
    /// may leave the page). A result the session did not ask for, or of the wrong length,
    /// throws (the helper is broken).
    #[wasm_bindgen(js_name = supplyAhead)]
    pub fn supply_ahead(&self, result: Vec<u8>) -> Result<(), JsError> {
        let Some((ahead, _)) = &self.ahead else {
            return Err(JsError::new("this session has no OT helper worker"));
        };
        let _busy = self.busy.enter();
        ahead.supply(result).map_err(|e| JsError::new(&e.to_string()))
    }
}

/// Runs a job a session posted for the OT helper worker: the sums of the streams it names, or
/// a whole chunk of random choices drawn and extended ([`crate::ot::run_ahead_job`]).
#[wasm_bindgen(js_name = runAheadJob)]
pub fn run_ahead_job(job: &[u8]) -> Result<Vec<u8>, JsError> {
    crate::ot::run_ahead_job(job).map_err(|e| js_error(&SessionError::Ot(e)))
}

thread_local! {
    /// In the OT helper worker: the positions each stream's session has claimed.
    static SKIPS: RefCell<Skips> = RefCell::new(Skips::default());
}

/// In the OT helper worker: takes in a notice a session posted (positions it has claimed).
#[wasm_bindgen(js_name = noteAheadClaimed)]
pub fn note_ahead_claimed(notice: &[u8]) {
    SKIPS.with(|skips| skips.borrow_mut().note(notice));
}

/// In the OT helper worker: whether the session has claimed every position of `job` already,
/// so that running it would only compute a result the session drops.
#[wasm_bindgen(js_name = aheadJobClaimed)]
pub fn ahead_job_claimed(job: &[u8]) -> bool {
    SKIPS.with(|skips| skips.borrow().is_claimed(job))
}

/// Runs a shared base-OT job (in another worker): its products, 64 bytes per OT.
#[wasm_bindgen(js_name = runBaseOtShare)]
pub fn run_base_ot_share(job: &[u8]) -> Result<Vec<u8>, JsError> {
    let share = crate::ot::base::BaseOtShare::from_bytes(job).map_err(|e| js_error(&SessionError::Ot(e)))?;
    let products = share.run().map_err(|e| js_error(&SessionError::Ot(e)))?;
    Ok(products.concat())
}

/// A security mode this build does not know: an input error (nothing was sent), reason
/// `security-mode`, the name given in `security`.
fn unknown_security(name: &str) -> JsError {
    let report = ErrorReport {
        kind: ErrorKind::Input,
        code: ErrorCode::BadRequest,
        wire_code: ErrorCode::BadRequest as u16,
        reason: "security-mode",
        fields: [("security".to_string(), serde_json::Value::from(name))].into_iter().collect(),
        message: format!("unknown security mode {name:?}: {}", Security::ALL.map(Security::name).join(" or ")),
    };
    JsError::new(&report.to_json())
}

fn parse_params(json: &str) -> Result<Vec<(String, u64)>, JsError> {
    if json.trim().is_empty() {
        return Ok(Vec::new());
    }
    let map: serde_json::Map<String, serde_json::Value> = serde_json::from_str(json).map_err(|_| js_error(&SessionError::ParamsNotObject))?;
    map.into_iter().map(|(param, value)| value.as_u64().map(|v| (param.clone(), v)).ok_or_else(|| js_error(&SessionError::ParamValue { param }))).collect()
}
