//! What the session tests and the attack tests share: the bundled Bristol files as services,
//! and a garbler and an evaluator session joined in memory.
#![allow(dead_code)] // each test file uses its own part

use garblet_circuits::bristol::{self, BristolInput, BristolOutput, InputSource};
use garblet_circuits::registry;
use garblet_circuits::{value, Encoding, Party, Reveal};
use garblet_core::protocol::catalog::ParamInfo;
use garblet_core::protocol::{
    BristolText, CircuitSource, ComputationResult, EvaluatorConfig, EvaluatorEvent, EvaluatorSession, GarblerConfig, GarblerSession, NoClock, ServiceDef, ServiceTable, SessionError,
};
use std::collections::BTreeMap;
use std::sync::Arc;

pub const AES_KEY: [u8; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];

pub fn bundled(name: &str) -> &'static [u8] {
    let path = format!("{}/../circuits/bristol/{name}", env!("CARGO_MANIFEST_DIR"));
    Box::leak(std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}")).into_boxed_slice())
}

pub fn bristol_service(name: &str, file: &str, inputs: Vec<(&str, Party, Encoding)>, reveal: Reveal, garbler_input: Vec<bool>) -> ServiceDef {
    let text = bundled(file);
    let info = Arc::new(bristol::scan(text).unwrap());
    let inputs = inputs.into_iter().map(|(n, p, e)| BristolInput { name: n.into(), source: InputSource::Party(p), encoding: e }).collect();
    let outputs = vec![BristolOutput { name: "out".into(), reveal }];
    ServiceDef { name: name.into(), doc: String::new(), source: CircuitSource::Bristol { text: BristolText::Embedded(text), info, inputs, outputs }, garbler_input }
}

pub fn services() -> Arc<ServiceTable> {
    let synthetic = registry::find("synthetic").unwrap();
    let mut params = BTreeMap::new();
    params.insert("width".to_string(), 256);
    ServiceTable::new(vec![
        bristol_service("aes128", "aes_128.txt", vec![("key", Party::Garbler, Encoding::Bytes), ("plaintext", Party::Evaluator, Encoding::Bytes)], Reveal::Evaluator, value::from_bytes(&AES_KEY)),
        bristol_service("add", "adder64.txt", vec![("a", Party::Garbler, Encoding::UInt), ("b", Party::Evaluator, Encoding::UInt)], Reveal::Both, value::from_u128(1000, 64)),
        bristol_service("add_to_garbler", "adder64.txt", vec![("a", Party::Garbler, Encoding::UInt), ("b", Party::Evaluator, Encoding::UInt)], Reveal::Garbler, value::from_u128(1000, 64)),
        ServiceDef {
            name: "synthetic".into(),
            doc: String::new(),
            source: CircuitSource::Builtin {
                spec: synthetic,
                params,
                client_params: vec![ParamInfo { name: "and_gates".into(), doc: String::new(), default: 1000, min: 1, max: 10_000_000, length_of: None }],
            },
            garbler_input: vec![true; 128],
        },
    ])
    .map(Arc::new)
    .unwrap()
}

pub struct Pair {
    pub garbler: GarblerSession,
    pub evaluator: EvaluatorSession,
    pub services: Arc<ServiceTable>,
}

impl Pair {
    pub fn new(window: u32) -> Pair {
        let config = GarblerConfig { max_window: 64 << 20, ..GarblerConfig::default() };
        let services = services();
        let mut pair = Pair {
            garbler: GarblerSession::new(config, Box::new(NoClock), services.clone()).unwrap(),
            evaluator: EvaluatorSession::new(EvaluatorConfig { window, ..EvaluatorConfig::default() }, Box::new(NoClock)).unwrap(),
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

