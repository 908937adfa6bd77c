//! The Bristol reader against hand-written circuits: each gate type, the format's rules, and
//! what scan refuses.

use super::*;
use crate::gate::{Party, Reveal};
use std::sync::Arc;
use crate::testing::run_plain;
use crate::value;

fn run_text(text: &str, inputs: &[(u128, usize)]) -> Vec<bool> {
    let info = Arc::new(scan(text.as_bytes()).unwrap());
    let (ins, outs) = default_io(&info.header, &vec![Party::Garbler; info.header.inputs.len()], Reveal::Evaluator);
    let program = BristolProgram::new(text.as_bytes(), info, ins, outs).unwrap();
    let bits = inputs.iter().flat_map(|&(v, w)| value::from_u128(v, w)).collect();
    run_plain(Box::new(program), bits, vec![])
}

fn scan_error(text: &str) -> (usize, String) {
    match scan(text.as_bytes()) {
        Err(BristolError::Syntax { line, reason }) => (line, reason),
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("accepted a malformed circuit:\n{text}"),
    }
}

#[test]
fn mand_gate() {
    // out_i = a_i ∧ b_i for two 3-bit inputs, as one MAND of width 3.
    let text = "1 9\n2 3 3\n1 3\n\n6 3 0 1 2 3 4 5 6 7 8 MAND\n";
    let info = scan(text.as_bytes()).unwrap();
    assert_eq!((info.stats.and, info.stats.mand, info.stats.other()), (3, 1, 1));
    for a in 0..8u128 {
        for b in 0..8u128 {
            assert_eq!(value::to_u128(&run_text(text, &[(a, 3), (b, 3)])), Some(a & b));
        }
    }
}

#[test]
fn eq_gate_assigns_constants() {
    // out = (x ∧ 1) ‖ (x ⊕ 0) ‖ 1 ‖ 0 built from EQ constants.
    let text = "6 7\n1 1\n1 4\n\n1 1 1 1 EQ\n1 1 0 2 EQ\n2 1 0 1 3 AND\n2 1 0 2 4 XOR\n1 1 1 5 EQ\n1 1 0 6 EQ\n";
    let info = scan(text.as_bytes()).unwrap();
    assert_eq!(info.stats.eq, 4);
    for x in 0..2u128 {
        assert_eq!(value::to_u128(&run_text(text, &[(x, 1)])), Some(x | (x << 1) | (1 << 2)));
    }
}

#[test]
fn eqw_gate_copies_a_wire() {
    // out = (¬x, x) with x copied by EQW.
    let text = "2 4\n1 1\n1 2\n\n1 1 0 2 INV\n1 1 0 3 EQW\n";
    for x in 0..2u128 {
        assert_eq!(value::to_u128(&run_text(text, &[(x, 1)])), Some((1 - x) | (x << 1)));
    }
}

#[test]
fn old_format_header() {
    let text = "1 3\n1 1 1\n\n2 1 0 1 2 AND\n";
    let info = scan(text.as_bytes()).unwrap();
    assert_eq!(info.header.format, Format::Old);
    assert_eq!(info.header.inputs, vec![1, 1]);
    assert_eq!(value::to_u128(&run_text(text, &[(1, 1), (1, 1)])), Some(1));
}

#[test]
fn malformed_files_name_the_line_and_reason() {
    let cases: &[(&str, usize, &str)] = &[
        ("", 1, "empty file"),
        ("1\n", 1, "gates wires"),
        ("1 3\n2 1 1\n1 1\n\n2 1 0 1 2 FOO\n", 5, "unknown operation 'FOO'"),
        ("1 3\n2 1 1\n1 1\n\n2 1 0 1 7 AND\n", 5, "out of range"),
        ("1 3\n2 1 1\n1 1\n\n2 1 0 2 2 AND\n", 5, "read before it is assigned"),
        ("2 3\n2 1 1\n1 1\n\n2 1 0 1 2 AND\n", 6, "the file ends after 1 gates"),
        ("1 3\n2 1 1\n1 1\n\n2 1 0 1 2 AND\n2 1 0 1 2 XOR\n", 6, "more gates"),
        ("2 4\n2 1 1\n1 1\n2 1 0 1 2 AND\n2 1 0 1 2 XOR\n", 5, "assigned twice"),
        ("1 3\n2 1 1\n1 1\n2 1 0 x 2 AND\n", 4, "'x' is not a number"),
        ("1 3\n2 1 1\n1 1\n1 1 0 2 AND\n", 4, "AND cannot have 1 inputs"),
        ("1 3\n2 1 1\n1 1\n1 1 5 2 EQ\n", 4, "constant 0 or 1"),
        ("1 3\n2 1 1\n1 1\n2 1 0 1\n", 4, "expected 2 inputs and 1 outputs"),
        ("1 3\n2 1 1\n1 1\n2 1 0 1 2\n", 4, "missing the operation"),
        ("1 3\n2 1 1\n1 1\n2 1 0 1 2 AND extra\n", 4, "unexpected 'extra'"),
        ("1 3\n3 1 1\n1 1\n2 1 0 1 2 AND\n", 2, "count followed by"),
        ("1 2\n2 1 2\n1 1\n2 1 0 1 1 AND\n", 2, "more than the 2 wires"),
        ("1 4\n2 1 1\n1 1\n1 1 0 2 INV\n", 4, "output wire 3 is never assigned"),
    ];
    for (text, line, reason) in cases {
        let (l, r) = scan_error(text);
        assert_eq!(l, *line, "{text:?}: {r}");
        assert!(r.contains(reason), "{text:?}: got '{r}', want '{reason}'");
    }
}

#[test]
fn a_file_without_line_breaks_is_refused_after_one_long_line() {
    // What reading a device or a binary file by mistake looks like: an endless first line.
    let endless = std::io::BufReader::new(std::io::repeat(b'7'));
    let err = scan(endless).err().expect("an error, not an endless read");
    assert_eq!(err.line(), Some(1));
    assert!(err.to_string().contains("longer than"), "{err}");
}

#[test]
fn a_header_cannot_ask_for_gigabytes() {
    // Found by fuzzing: four billion wires declared on a two-line file made the scan allocate
    // 4 bytes for each before reading a gate.
    let (line, reason) = scan_error("376 1088888884\n2 1 1\n1 1\n");
    assert_eq!(line, 1);
    assert!(reason.contains("the most a circuit may have"), "{reason}");
}
