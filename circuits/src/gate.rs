//! The gate IR: what a circuit program emits and every backend consumes.
//!
//! Gates refer to *slots*, not wires: a slot holds one wire value (a bit, a label) and is reused
//! once that wire is dead, so a backend's storage is bounded by the circuit's live width.

/// Index of a wire-value slot.
pub type Slot = u32;

/// Gates per batch: large enough to amortise per-batch work, small enough that a batch (16 bytes
/// a gate, plus its garbled tables) stays in cache.
pub const BATCH_GATES: usize = 4096;

/// The two parties. The garbler is the server, the evaluator the browser.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Party {
    Garbler,
    Evaluator,
}

impl Party {
    pub const BOTH: [Party; 2] = [Party::Garbler, Party::Evaluator];

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn name(self) -> &'static str {
        match self {
            Party::Garbler => "garbler",
            Party::Evaluator => "evaluator",
        }
    }
}

/// Who learns an output bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reveal {
    Evaluator,
    Garbler,
    Both,
}

impl Reveal {
    pub fn to_evaluator(self) -> bool {
        matches!(self, Reveal::Evaluator | Reveal::Both)
    }

    pub fn to_garbler(self) -> bool {
        matches!(self, Reveal::Garbler | Reveal::Both)
    }

    pub fn name(self) -> &'static str {
        match self {
            Reveal::Evaluator => "evaluator",
            Reveal::Garbler => "garbler",
            Reveal::Both => "both",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "evaluator" => Some(Reveal::Evaluator),
            "garbler" => Some(Reveal::Garbler),
            "both" => Some(Reveal::Both),
            _ => None,
        }
    }
}

/// One gate. Inputs of each party are consumed in order: the k-th `Input { party }` gate reads
/// that party's k-th input bit. Outputs are produced in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    Input { party: Party, out: Slot },
    Xor { a: Slot, b: Slot, out: Slot },
    And { a: Slot, b: Slot, out: Slot },
    Not { a: Slot, out: Slot },
    /// Reveal the value in slot `a`.
    Output { a: Slot, to: Reveal },
    /// An output whose value is public (folded to a constant while building).
    OutputConst { value: bool, to: Reveal },
}

impl Gate {
    /// The slots the gate reads, in operand order: the first `n` of the array.
    #[inline]
    pub fn reads(&self) -> ([Slot; 2], usize) {
        match *self {
            Gate::Xor { a, b, .. } | Gate::And { a, b, .. } => ([a, b], 2),
            Gate::Not { a, .. } | Gate::Output { a, .. } => ([a, 0], 1),
            Gate::Input { .. } | Gate::OutputConst { .. } => ([0; 2], 0),
        }
    }

    /// The slot the gate writes, if it makes a wire.
    #[inline]
    pub fn writes(&self) -> Option<Slot> {
        match *self {
            Gate::Input { out, .. } | Gate::Xor { out, .. } | Gate::And { out, .. } | Gate::Not { out, .. } => Some(out),
            Gate::Output { .. } | Gate::OutputConst { .. } => None,
        }
    }

    /// Every slot the gate touches: those it reads, in operand order, then the one it writes.
    #[inline]
    pub fn slots(&self) -> impl Iterator<Item = Slot> {
        let ((reads, n), writes) = (self.reads(), self.writes());
        reads.into_iter().take(n).chain(writes)
    }
}

/// Gate counts of a batch or a whole circuit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GateCounts {
    pub and: u64,
    pub xor: u64,
    pub not: u64,
    /// Input bits, indexed by [`Party::index`].
    pub inputs: [u64; 2],
    /// Non-constant outputs the evaluator learns (they carry a decoding bit).
    pub outputs_to_evaluator: u64,
    /// Non-constant outputs the garbler learns (the evaluator returns them).
    pub outputs_to_garbler: u64,
    /// All outputs, constant ones included.
    pub outputs: u64,
}

impl GateCounts {
    #[inline]
    pub fn count(&mut self, gate: &Gate) {
        match *gate {
            Gate::Input { party, .. } => self.inputs[party.index()] += 1,
            Gate::Xor { .. } => self.xor += 1,
            Gate::And { .. } => self.and += 1,
            Gate::Not { .. } => self.not += 1,
            Gate::Output { to, .. } => {
                self.outputs += 1;
                self.outputs_to_evaluator += to.to_evaluator() as u64;
                self.outputs_to_garbler += to.to_garbler() as u64;
            }
            Gate::OutputConst { .. } => self.outputs += 1,
        }
    }

    /// The counts of a run of gates.
    pub fn of(gates: &[Gate]) -> Self {
        let mut counts = GateCounts::default();
        for g in gates {
            counts.count(g);
        }
        counts
    }

    pub fn add(&mut self, other: &GateCounts) {
        self.and += other.and;
        self.xor += other.xor;
        self.not += other.not;
        self.inputs[0] += other.inputs[0];
        self.inputs[1] += other.inputs[1];
        self.outputs_to_evaluator += other.outputs_to_evaluator;
        self.outputs_to_garbler += other.outputs_to_garbler;
        self.outputs += other.outputs;
    }

    /// Gates that compute something (inputs and outputs excluded).
    pub fn logic_gates(&self) -> u64 {
        self.and + self.xor + self.not
    }
}

/// A run of gates handed from a program to a backend, plus the number of slots in use so far
/// (backends size their slot storage from it, once per batch).
#[derive(Clone, Debug, Default)]
pub struct Batch {
    pub gates: Vec<Gate>,
    pub slots: u32,
    pub counts: GateCounts,
}

impl Batch {
    pub fn with_capacity(gates: usize) -> Self {
        Batch { gates: Vec::with_capacity(gates), slots: 0, counts: GateCounts::default() }
    }

    #[inline]
    pub fn push(&mut self, gate: Gate) {
        self.counts.count(&gate);
        self.gates.push(gate);
    }

    /// Appends a run of gates whose counts the caller already knows (a program that emits the
    /// same run over and over counts it once), so the gates are only copied, not inspected.
    /// `counts` must be exactly the counts of `gates`: debug builds check it.
    #[inline]
    pub fn extend_counted(&mut self, gates: &[Gate], counts: &GateCounts) {
        debug_assert_eq!(*counts, GateCounts::of(gates), "counts given for a run of gates");
        self.gates.extend_from_slice(gates);
        self.counts.add(counts);
    }

    pub fn clear(&mut self) {
        self.gates.clear();
        self.counts = GateCounts::default();
    }

    pub fn len(&self) -> usize {
        self.gates.len()
    }

    pub fn is_empty(&self) -> bool {
        self.gates.is_empty()
    }
}
