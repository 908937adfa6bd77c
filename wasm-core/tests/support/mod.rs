//! What the session tests and the attack tests share: services as a server would offer them
//! (the bundled Bristol files and built-in programs), and a garbler and an evaluator session
//! joined in memory.
#![allow(dead_code)] // each test file uses its own part

use garblet_circuits::bristol::{self, BristolInfo, BristolInput, BristolOutput, BristolProgram, InputSource};
use garblet_circuits::registry::{self, ProgramSpec};
use garblet_circuits::{value, Batch, Encoding, Party, Reveal, Runner};
use garblet_core::garble::Garbling;
use garblet_core::protocol::catalog::{hex, CircuitInfo, FieldInfo, OutputInfo, ParamInfo, ResolvedCircuit};
use garblet_core::protocol::{
    topology, Catalog, ComputationResult, ComputeRequest, EvaluatorConfig, EvaluatorEvent, EvaluatorSession, GarblerConfig, GarblerSession, GateSource, NoClock, Plan, RecordedCircuit, ResolveError, Security,
    ServiceInfo, Services, SessionError,
};
use std::sync::Arc;

pub const AES_KEY: [u8; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];

pub fn bundled(name: &str) -> &'static [u8] {
    let path = format!("{}/../circuits/bristol/{name}", env!("CARGO_MANIFEST_DIR"));
    Box::leak(std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}")).into_boxed_slice())
}

/// The tests' [`Services`]: a fixed list, each service a circuit and the garbler's input. Built-in
/// programs are built per computation; Bristol circuits are recorded once and replayed, as the
/// server does with its small ones. (The server's own table, with its configuration's checks, is
/// garblet-server's `service_table`.)
pub struct TestServices {
    services: Vec<TestService>,
    catalog_json: String,
}

pub struct TestService {
    info: ServiceInfo,
    /// The built-in program, or `None` for a recorded circuit.
    spec: Option<&'static ProgramSpec>,
    recorded: Option<Arc<Recording>>,
    garbler_input: Vec<bool>,
}

/// A streamed circuit's batches with their topology records.
struct Recording(Vec<(Batch, Vec<u8>)>);

impl RecordedCircuit for Recording {
    fn batch(&self, index: usize) -> Option<(&Batch, &[u8])> {
        self.0.get(index).map(|(batch, record)| (batch, record.as_slice()))
    }
}

/// A built-in program with the parameters the service fixes and those the client may set.
pub fn builtin_service(name: &str, program: &str, params: &[(&str, u64)], client_params: Vec<ParamInfo>, garbler_input: Vec<bool>) -> TestService {
    let spec = registry::find(program).unwrap();
    let resolved = spec.resolve(params.iter().copied()).unwrap();
    let shape = spec.instantiate(&resolved).unwrap().shape().clone();
    let inputs = spec.garbler_fields(&resolved, &shape).iter().chain(shape.inputs_of(Party::Evaluator)).map(FieldInfo::from_field).collect();
    let info = ServiceInfo {
        name: name.into(),
        doc: String::new(),
        circuit: CircuitInfo::Builtin { program: program.into(), params: params.iter().map(|(k, v)| (k.to_string(), *v)).collect(), client_params },
        inputs,
        outputs: shape.outputs.iter().map(OutputInfo::from_field).collect(),
        and_gates: None,
        security: Security::Standard,
    };
    TestService { info, spec: Some(spec), recorded: None, garbler_input }
}

/// A bundled Bristol file with one output, streamed to the evaluator.
pub fn bristol_service(name: &str, file: &str, inputs: Vec<(&str, Party, Encoding)>, reveal: Reveal, garbler_input: Vec<bool>) -> TestService {
    let text = bundled(file);
    let info: Arc<BristolInfo> = Arc::new(bristol::scan(text).unwrap());
    let inputs = inputs.into_iter().map(|(n, p, e)| BristolInput { name: n.into(), source: InputSource::Party(p), encoding: e }).collect();
    let outputs = vec![BristolOutput { name: "out".into(), reveal, signed: false, bytes: false }];
    let mut runner = Runner::new(Box::new(BristolProgram::new(text, info, inputs, outputs).unwrap()));
    let shape = runner.shape().clone();
    let mut recording = Vec::new();
    let id = topology::circuit_id(&mut runner, |batch, record| recording.push((batch.clone(), record))).unwrap();
    let summary = runner.summary();
    let info = ServiceInfo {
        name: name.into(),
        doc: String::new(),
        circuit: CircuitInfo::Streamed { hash: hex(&id), max_live: summary.max_live },
        inputs: shape.inputs.iter().map(FieldInfo::from_field).collect(),
        outputs: shape.outputs.iter().map(OutputInfo::from_field).collect(),
        and_gates: Some(summary.counts.and),
        security: Security::Standard,
    };
    TestService { info, spec: None, recorded: Some(Arc::new(Recording(recording))), garbler_input }
}

impl TestService {
    /// The service, offering `security`.
    pub fn offering(mut self, security: Security) -> Self {
        self.info.security = security;
        self
    }
}

impl TestServices {
    pub fn new(services: Vec<TestService>) -> Arc<TestServices> {
        let catalog_json = Catalog { services: services.iter().map(|s| s.info.clone()).collect() }.to_json();
        Arc::new(TestServices { services, catalog_json })
    }

    pub fn catalog(&self) -> Catalog {
        Catalog::parse(&self.catalog_json).unwrap()
    }
}

impl Services for TestServices {
    fn catalog_json(&self) -> &str {
        &self.catalog_json
    }

    fn plan(&self, request: &ComputeRequest) -> Result<Plan, SessionError> {
        let service = self.services.iter().find(|s| s.info.name == request.service).ok_or_else(|| ResolveError::UnknownService { service: request.service.clone() })?;
        if request.security > service.info.security {
            return Err(SessionError::SecurityNotOffered { service: request.service.clone(), offered: service.info.security, requested: request.security });
        }
        let resolved = service.info.resolve(&request.params)?;
        let (gates, garbler_inputs, and_gates) = match (&resolved.circuit, service.spec, &service.recorded) {
            (ResolvedCircuit::Builtin { params, .. }, Some(spec), _) => {
                let program = spec.instantiate(params)?;
                let and_gates = program.and_gates_hint();
                let gates = match request.security {
                    Security::Standard => GateSource::Program(program),
                    // Cut-and-choose garbles twice: a program built afresh for each pass (the
                    // authenticated mode takes either).
                    Security::CutAndChoose | Security::Authenticated => {
                        let params = params.clone();
                        GateSource::Factory(Box::new(move || Ok(spec.instantiate(&params)?)))
                    }
                };
                (gates, spec.garbler_bits(params, service.garbler_input.clone())?, and_gates)
            }
            (ResolvedCircuit::Streamed { .. }, None, Some(recorded)) => (GateSource::Recorded(recorded.clone()), service.garbler_input.clone(), service.info.and_gates),
            _ => unreachable!("a test service is a built-in program or a recorded circuit"),
        };
        let stream_topology = service.recorded.is_some();
        Ok(Plan { shape: resolved.shape, gates, garbler_inputs, stream_topology, circuit_id: resolved.circuit_id, and_gates })
    }
}

pub fn services() -> Arc<TestServices> {
    TestServices::new(service_list())
}

/// The services of [`services`], to add to.
pub fn service_list() -> Vec<TestService> {
    vec![
        bristol_service("aes128", "aes_128.txt", vec![("key", Party::Garbler, Encoding::Bytes), ("plaintext", Party::Evaluator, Encoding::Bytes)], Reveal::Evaluator, value::from_bytes(&AES_KEY)).offering(Security::Authenticated),
        bristol_service("add", "adder64.txt", vec![("a", Party::Garbler, Encoding::UInt), ("b", Party::Evaluator, Encoding::UInt)], Reveal::Both, value::from_u128(1000, 64)).offering(Security::Authenticated),
        bristol_service("add_to_garbler", "adder64.txt", vec![("a", Party::Garbler, Encoding::UInt), ("b", Party::Evaluator, Encoding::UInt)], Reveal::Garbler, value::from_u128(1000, 64)).offering(Security::Authenticated),
        builtin_service("millionaires", "millionaires", &[("n", 32)], vec![], value::from_u128(5_000_000, 32)).offering(Security::Authenticated),
        builtin_service(
            "synthetic",
            "synthetic",
            &[("width", 256)],
            vec![ParamInfo { name: "and_gates".into(), doc: String::new(), default: 1000, min: 1, max: 10_000_000, length_of: None }],
            vec![true; 128],
        ),
        builtin_service(
            "synthetic_protected",
            "synthetic",
            &[("width", 256)],
            vec![ParamInfo { name: "and_gates".into(), doc: String::new(), default: 1000, min: 1, max: 1_000_000, length_of: None }],
            vec![true; 128],
        )
        .offering(Security::Authenticated),
    ]
}

pub struct Pair {
    pub garbler: GarblerSession,
    pub evaluator: EvaluatorSession,
    pub services: Arc<TestServices>,
}

impl Pair {
    /// A pair with both sides' default garbling (either scheme; the server prefers three-halves).
    pub fn new(window: u32) -> Pair {
        Pair::with_garbling(window, Garbling::Auto, Garbling::Auto)
    }

    /// A pair whose server offers `server` and whose client accepts `client`.
    pub fn with_garbling(window: u32, server: Garbling, client: Garbling) -> Pair {
        Pair::with_configs(GarblerConfig::default(), server, EvaluatorConfig { window, ..EvaluatorConfig::default() }, client)
    }

    /// A pair whose server offers SoftSpoken's k in `offer` (per OT direction) and whose client
    /// accepts the k in `accept` (masks).
    pub fn with_ot_k(offer: [Vec<u8>; 2], accept: [u8; 2]) -> Pair {
        let client = EvaluatorConfig { window: 4 << 20, ot_k: accept, ..EvaluatorConfig::default() };
        Pair::with_configs(GarblerConfig { ot_k: offer, ..GarblerConfig::default() }, Garbling::Auto, client, Garbling::Auto)
    }

    /// A pair with these configurations (the server's window raised as for every pair).
    pub fn with_configs(server_config: GarblerConfig, server: Garbling, client_config: EvaluatorConfig, client: Garbling) -> Pair {
        let config = GarblerConfig { max_window: 64 << 20, ..server_config };
        let services = services();
        let mut pair = Pair {
            garbler: GarblerSession::with_garbling(config, server, Box::new(NoClock), services.clone()).unwrap(),
            evaluator: EvaluatorSession::with_garbling(client_config, client, Box::new(NoClock)).unwrap(),
            services,
        };
        pair.pump().unwrap();
        assert_eq!(pair.evaluator.poll_event(), Some(EvaluatorEvent::Ready));
        pair
    }

    /// Delivers frames both ways until neither side has anything to say.
    pub fn pump(&mut self) -> Result<(), String> {
        self.pump_altered(|frame| frame)
    }

    /// [`pump`](Self::pump), with every frame from the evaluator passed through `alter` on its
    /// way: a malicious client built from an honest one.
    pub fn pump_altered(&mut self, mut alter: impl FnMut(Vec<u8>) -> Vec<u8>) -> Result<(), String> {
        loop {
            let mut moved = false;
            for f in drain(&mut self.evaluator).map_err(|e| format!("evaluator: {e}"))? {
                moved = true;
                self.garbler.handle(&alter(f)).map_err(|e| format!("garbler: {e}"))?;
            }
            while let Some(f) = self.garbler.poll_transmit().unwrap() {
                moved = true;
                self.evaluator.handle(&f).map_err(|e| format!("evaluator: {e}"))?;
            }
            if !moved {
                return Ok(());
            }
        }
    }

    pub fn compute(&mut self, service: &str, params: Vec<(String, u64)>, inputs: Vec<bool>) -> ComputationResult {
        self.evaluator.start(service, params, inputs).unwrap();
        self.pump().unwrap();
        match self.evaluator.poll_event() {
            Some(EvaluatorEvent::Finished(r)) => *r,
            other => panic!("no result: {other:?}"),
        }
    }
}

/// Everything the evaluator has to send now (its OT work included).
pub fn drain(evaluator: &mut EvaluatorSession) -> Result<Vec<Vec<u8>>, SessionError> {
    let mut frames = Vec::new();
    loop {
        match evaluator.poll_transmit()? {
            Some(f) => frames.push(f),
            None => return Ok(frames),
        }
    }
}


/// Runs each of a step's parts on a scoped thread of its own (the server's pool, in
/// `garblet_server::threads`, shares a few threads out instead).
#[derive(Debug)]
pub struct ScopedThreads;

impl garblet_core::spread::Spawner for ScopedThreads {
    fn run_all<'a>(&self, jobs: Vec<Box<dyn FnOnce() + Send + 'a>>) {
        std::thread::scope(|scope| {
            let helpers: Vec<_> = jobs.into_iter().map(|job| scope.spawn(job)).collect();
            for helper in helpers {
                helper.join().unwrap();
            }
        });
    }
}

/// `count` threads of [`ScopedThreads`].
pub fn threads(count: usize) -> garblet_core::spread::Threads {
    garblet_core::spread::Threads::new(count, std::sync::Arc::new(ScopedThreads))
}
