//! The server's services — a circuit plus the garbler's input each — and the table that turns
//! them into the catalog and into [`Plan`]s for the garbler session (its [`Services`]).
//!
//! The session protocol (garblet-core) knows services only through that trait; what lives here
//! is the server's: circuits read from files, the checks of its configuration, and the circuits
//! it keeps in memory. None of it is in the browser's wasm.

use garblet_circuits::bristol::{BristolInfo, BristolInput, BristolOutput, BristolProgram};
use garblet_circuits::registry::ProgramSpec;
use garblet_circuits::{Batch, BuildError, Counter, Party, Program, Runner};
use garblet_core::protocol::catalog::{hex, CircuitInfo, FieldInfo, OutputInfo, ParamInfo, ResolvedCircuit};
use garblet_core::protocol::{topology, Catalog, ComputeRequest, GateSource, Plan, RecordedCircuit, ResolveError, Security, ServiceError, ServiceFailure, ServiceInfo, Services, SessionError};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::sync::Arc;

/// Where a Bristol circuit's text is: compiled into the binary, or a file read per session.
#[derive(Clone, Debug)]
pub enum BristolText {
    Embedded(&'static [u8]),
    File(PathBuf),
}

impl BristolText {
    pub fn open(&self) -> std::io::Result<Box<dyn BufRead>> {
        Ok(match self {
            BristolText::Embedded(bytes) => Box::new(*bytes),
            BristolText::File(path) => Box::new(BufReader::with_capacity(1 << 16, std::fs::File::open(path)?)),
        })
    }
}

pub enum CircuitSource {
    /// A built-in program; `params` fixed by the service, `client_params` settable by clients.
    Builtin { spec: &'static ProgramSpec, params: BTreeMap<String, u64>, client_params: Vec<ParamInfo> },
    /// A Bristol circuit, streamed to the evaluator.
    Bristol { text: BristolText, info: Arc<BristolInfo>, inputs: Vec<BristolInput>, outputs: Vec<BristolOutput> },
}

/// Bristol circuits up to this many gates are built once and replayed from memory (about 22
/// bytes a gate); larger ones are read from their file by every session.
const CACHE_GATES: u64 = 4_000_000;

/// A streamed circuit built once and kept: its batches and their topology records, so a session
/// replays them instead of building the circuit again (a Bristol file is parsed once, not once
/// per session).
struct CachedCircuit {
    batches: Vec<Batch>,
    /// The topology record of each batch.
    records: Vec<Vec<u8>>,
}

impl RecordedCircuit for CachedCircuit {
    fn batch(&self, index: usize) -> Option<(&Batch, &[u8])> {
        Some((self.batches.get(index)?, self.records.get(index)?))
    }
}

/// One service of a server.
pub struct ServiceDef {
    pub name: String,
    pub doc: String,
    pub source: CircuitSource,
    /// The garbler's input as the service holds it (its fields concatenated, bit i = wire i).
    pub garbler_input: Vec<bool>,
    /// The strongest protection the service offers (its catalog entry's `security`); requests
    /// for it or any weaker one are served.
    pub security: Security,
}

struct Entry {
    def: ServiceDef,
    info: ServiceInfo,
    cached: Option<Arc<CachedCircuit>>,
}

/// The services of a server, with their catalog.
pub struct ServiceTable {
    entries: Vec<Entry>,
    catalog_json: String,
}

/// Built-in services whose AND count is at most this are counted in a dry run for the catalog.
const COUNT_LIMIT: u64 = 50_000_000;

impl ServiceTable {
    /// Checks every service (input sizes, parameters, circuit files) and builds the catalog.
    pub fn new(defs: Vec<ServiceDef>) -> Result<Self, ServiceFailure> {
        let mut entries = Vec::new();
        for def in defs {
            let failure = |source| ServiceFailure { service: def.name.clone(), source };
            if entries.iter().any(|e: &Entry| e.def.name == def.name) {
                return Err(failure(ServiceError::Duplicate));
            }
            let (info, cached) = describe(&def).map_err(failure)?;
            entries.push(Entry { def, info, cached });
        }
        let catalog = Catalog { services: entries.iter().map(|e| e.info.clone()).collect() };
        Ok(ServiceTable { catalog_json: catalog.to_json(), entries })
    }

    pub fn catalog(&self) -> Catalog {
        Catalog { services: self.entries.iter().map(|e| e.info.clone()).collect() }
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.def.name.as_str())
    }
}

/// The catalog entry of a service, checking it on the way, and its circuit if worth caching.
fn describe(def: &ServiceDef) -> Result<(ServiceInfo, Option<Arc<CachedCircuit>>), ServiceError> {
    match &def.source {
        CircuitSource::Builtin { spec, params, client_params } => {
            for p in client_params {
                if !spec.params.iter().any(|q| q.name == p.name) {
                    return Err(BuildError::UnknownParameter { program: spec.name, name: p.name.clone(), known: spec.params.iter().map(|q| q.name).collect() }.into());
                }
            }
            let resolved = spec.resolve(params.iter().map(|(k, v)| (k.as_str(), *v)))?;
            let program = spec.instantiate(&resolved)?;
            let shape = program.shape().clone();
            let garbler_fields = spec.garbler_fields(&resolved, &shape);
            let garbler_bits: usize = garbler_fields.iter().map(|f| f.bits).sum();
            if def.garbler_input.len() != garbler_bits {
                return Err(ServiceError::GarblerInput { expected: garbler_bits as u64, got: def.garbler_input.len() as u64 });
            }
            spec.garbler_bits(&resolved, def.garbler_input.clone())?;
            let mut counter = Counter::default();
            let summary = Runner::new(program).run(&mut counter).map_err(|e| match e {
                garblet_circuits::program::RunError::Build(e) => e,
                garblet_circuits::program::RunError::Backend(never) => match never {},
            })?;
            let and_gates = (summary.counts.and <= COUNT_LIMIT).then_some(summary.counts.and);
            let inputs = garbler_fields.iter().chain(shape.inputs_of(Party::Evaluator)).map(FieldInfo::from_field).collect();
            let info = ServiceInfo {
                name: def.name.clone(),
                doc: def.doc.clone(),
                circuit: CircuitInfo::Builtin { program: spec.name.into(), params: params.clone(), client_params: client_params.clone() },
                inputs,
                outputs: shape.outputs.iter().map(OutputInfo::from_field).collect(),
                and_gates,
                security: def.security,
            };
            Ok((info, None))
        }
        CircuitSource::Bristol { text, info, inputs, outputs } => {
            let program = bristol_program(text, info, inputs, outputs)?;
            let shape = program.shape().clone();
            let garbler_bits = shape.input_bits(Party::Garbler);
            if def.garbler_input.len() != garbler_bits {
                return Err(ServiceError::GarblerInput { expected: garbler_bits as u64, got: def.garbler_input.len() as u64 });
            }
            // The streamed circuit's identity and width: build it once, as a session would, and
            // keep it if it is small enough to replay from memory.
            let keep = (info.header.gates as u64) <= CACHE_GATES;
            let mut cache = CachedCircuit { batches: Vec::new(), records: Vec::new() };
            let mut runner = Runner::new(program);
            let hash = topology::circuit_id(&mut runner, |batch, record| {
                if keep {
                    cache.batches.push(batch.clone());
                    cache.records.push(record);
                }
            })?;
            let summary = runner.summary();
            let info = ServiceInfo {
                name: def.name.clone(),
                doc: def.doc.clone(),
                circuit: CircuitInfo::Streamed { hash: hex(&hash), max_live: summary.max_live },
                inputs: shape.inputs.iter().map(FieldInfo::from_field).collect(),
                outputs: shape.outputs.iter().map(OutputInfo::from_field).collect(),
                and_gates: Some(summary.counts.and),
                security: def.security,
            };
            Ok((info, keep.then(|| Arc::new(cache))))
        }
    }
}

fn bristol_program(text: &BristolText, info: &Arc<BristolInfo>, inputs: &[BristolInput], outputs: &[BristolOutput]) -> Result<Box<dyn Program>, ServiceError> {
    let reader = text.open().map_err(ServiceError::CircuitFile)?;
    let program = BristolProgram::new(reader, info.clone(), inputs.to_vec(), outputs.to_vec())?;
    Ok(Box::new(program))
}

impl Services for ServiceTable {
    fn catalog_json(&self) -> &str {
        &self.catalog_json
    }

    fn plan(&self, request: &ComputeRequest) -> Result<Plan, SessionError> {
        let entry = self.entries.iter().find(|e| e.def.name == request.service).ok_or_else(|| ResolveError::UnknownService { service: request.service.clone() })?;
        if request.security > entry.def.security {
            return Err(SessionError::SecurityNotOffered { service: entry.def.name.clone(), offered: entry.def.security, requested: request.security });
        }
        let resolved = entry.info.resolve(&request.params)?;
        let service = entry.def.name.clone();
        let internal = move |source: ServiceError| SessionError::from(ServiceFailure { service: service.clone(), source });
        // A standard computation garbles its circuit once; a cut-and-choose one runs it twice
        // (to commit to the circuits, then to stream the evaluation circuits), so it gets a
        // source that can be run again: the cached circuit, or a factory.
        let repeat = request.security == Security::CutAndChoose;
        match &entry.def.source {
            CircuitSource::Builtin { spec, .. } => {
                let ResolvedCircuit::Builtin { params, .. } = &resolved.circuit else {
                    return Err(internal(ServiceError::CatalogMismatch));
                };
                let program = spec.instantiate(params).map_err(|e| internal(e.into()))?;
                let garbler_inputs = spec.garbler_bits(params, entry.def.garbler_input.clone()).map_err(|e| internal(e.into()))?;
                let expected = program.shape().input_bits(Party::Garbler);
                if garbler_inputs.len() != expected {
                    return Err(internal(ServiceError::GarblerInput { expected: expected as u64, got: garbler_inputs.len() as u64 }));
                }
                let and_gates = entry.info.default_and_gates(&resolved).or_else(|| program.and_gates_hint());
                let gates = if repeat {
                    let (spec, params) = (*spec, params.clone());
                    GateSource::Factory(Box::new(move || spec.instantiate(&params).map_err(|e| internal(e.into()))))
                } else {
                    GateSource::Program(program)
                };
                Ok(Plan { shape: resolved.shape, gates, garbler_inputs, stream_topology: false, circuit_id: resolved.circuit_id, and_gates })
            }
            CircuitSource::Bristol { text, info, inputs, outputs } => {
                let gates = match &entry.cached {
                    Some(circuit) => GateSource::Recorded(circuit.clone()),
                    None if repeat => {
                        // Opened now, so that a missing file refuses the request up front, and
                        // again for each pass.
                        bristol_program(text, info, inputs, outputs).map_err(&internal)?;
                        let (text, info, inputs, outputs) = (text.clone(), info.clone(), inputs.clone(), outputs.clone());
                        GateSource::Factory(Box::new(move || bristol_program(&text, &info, &inputs, &outputs).map_err(&internal)))
                    }
                    None => GateSource::Program(bristol_program(text, info, inputs, outputs).map_err(&internal)?),
                };
                Ok(Plan { shape: resolved.shape, gates, garbler_inputs: entry.def.garbler_input.clone(), stream_topology: true, circuit_id: resolved.circuit_id, and_gates: entry.info.and_gates })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use garblet_circuits::bristol::{self, InputSource};
    use garblet_circuits::{Encoding, Reveal};
    use garblet_core::protocol::{ErrorCode, ErrorKind};

    /// Hamming distance of 64 bits, a built-in program.
    fn hamming(security: Security) -> ServiceDef {
        let spec = garblet_circuits::registry::find("hamming").unwrap();
        let source = CircuitSource::Builtin { spec, params: [("n".to_string(), 64)].into_iter().collect(), client_params: vec![] };
        ServiceDef { name: "hamming".into(), doc: String::new(), source, garbler_input: vec![true; 64], security }
    }

    /// A 64-bit adder, a Bristol circuit: the garbler's 1000 plus the evaluator's number.
    fn add(security: Security) -> ServiceDef {
        let text = BristolText::Embedded(include_bytes!("../../circuits/bristol/adder64.txt"));
        let info = Arc::new(bristol::scan(text.open().unwrap()).unwrap());
        let input = |name: &str, party| BristolInput { name: name.into(), source: InputSource::Party(party), encoding: Encoding::UInt };
        let inputs = vec![input("a", Party::Garbler), input("b", Party::Evaluator)];
        let outputs = vec![BristolOutput { name: "sum".into(), reveal: Reveal::Evaluator, signed: false, bytes: false }];
        let garbler_input = (0..64).map(|i| (1000u64 >> i) & 1 == 1).collect();
        ServiceDef { name: "add".into(), doc: String::new(), source: CircuitSource::Bristol { text, info, inputs, outputs }, garbler_input, security }
    }

    fn table(defs: Vec<ServiceDef>) -> ServiceTable {
        ServiceTable::new(defs).unwrap()
    }

    fn request(service: &str, security: Security) -> ComputeRequest {
        ComputeRequest { service: service.into(), params: vec![], circuit_id: [0; 32], evaluator_bits: 64, security, phase: Default::default() }
    }

    /// What a pass over a program sees: its shape, the topology hash of its gates and its AND
    /// gates.
    fn run(program: Box<dyn Program>) -> (garblet_circuits::Shape, [u8; 32], u64) {
        let shape = program.shape().clone();
        let mut runner = Runner::new(program);
        let id = topology::circuit_id(&mut runner, |_, _| {}).unwrap();
        (shape, id, runner.summary().counts.and)
    }

    /// Two passes of a factory: the same circuit each time.
    fn run_twice(gates: GateSource) -> (garblet_circuits::Shape, [u8; 32], u64) {
        let GateSource::Factory(make) = gates else { panic!("not a factory") };
        let first = run(make().unwrap());
        assert_eq!(first, run(make().unwrap()), "the second pass builds the same circuit");
        first
    }

    #[test]
    fn a_service_offering_standard_refuses_a_cut_and_choose_request() {
        let table = table(vec![hamming(Security::Standard), add(Security::Standard)]);
        for service in ["hamming", "add"] {
            let Err(e) = table.plan(&request(service, Security::CutAndChoose)) else { panic!("{service}: planned") };
            assert!(matches!(&e, SessionError::SecurityNotOffered { service: s, offered: Security::Standard, requested: Security::CutAndChoose } if s == service), "{e:?}");
            assert_eq!((e.code(), e.kind(), e.report().reason), (ErrorCode::BadRequest, ErrorKind::Input, "security-not-offered"));
            assert!(matches!(table.plan(&request(service, Security::Standard)), Ok(Plan { gates: GateSource::Program(_) | GateSource::Recorded(_), .. })));
        }
    }

    #[test]
    fn a_cut_and_choose_request_gets_a_built_in_program_it_can_build_twice() {
        let table = table(vec![hamming(Security::CutAndChoose)]);
        // A standard request to a service that offers more: one pass, as before.
        assert!(matches!(table.plan(&request("hamming", Security::Standard)).unwrap().gates, GateSource::Program(_)));
        let plan = table.plan(&request("hamming", Security::CutAndChoose)).unwrap();
        let (shape, _, and_gates) = run_twice(plan.gates);
        assert_eq!(shape, plan.shape);
        assert_eq!(Some(and_gates), plan.and_gates);
    }

    #[test]
    fn a_cut_and_choose_request_gets_a_bristol_circuit_it_can_run_twice() {
        let mut table = table(vec![add(Security::CutAndChoose)]);
        // Small enough to be kept: replayed from memory, any number of times.
        assert!(matches!(table.plan(&request("add", Security::CutAndChoose)).unwrap().gates, GateSource::Recorded(_)));
        // One too large to keep is read again for each pass.
        table.entries[0].cached = None;
        assert!(matches!(table.plan(&request("add", Security::Standard)).unwrap().gates, GateSource::Program(_)));
        let plan = table.plan(&request("add", Security::CutAndChoose)).unwrap();
        let (shape, id, and_gates) = run_twice(plan.gates);
        assert_eq!((shape, id, Some(and_gates)), (plan.shape, plan.circuit_id, plan.and_gates), "the circuit the catalog announces");
    }

    #[test]
    fn the_catalog_says_what_each_service_offers() {
        let table = table(vec![hamming(Security::Standard), add(Security::CutAndChoose)]);
        let catalog = Catalog::parse(table.catalog_json()).unwrap();
        let security: Vec<(&str, Security)> = catalog.services.iter().map(|s| (s.name.as_str(), s.security)).collect();
        assert_eq!(security, [("hamming", Security::Standard), ("add", Security::CutAndChoose)]);
    }
}
