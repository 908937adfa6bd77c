//! Which module runs a computation of each security mode: the one place that maps a
//! [`Security`] to its module. The sessions call these and then drive the computation through
//! the contract of [`super::mode`] alone.

use super::authenticated::{self, AuthEvaluator, AuthGarbler};
use super::catalog::Security;
use super::cut_and_choose::{CncEvaluator, CncGarbler, FromSession};
use super::frame::{ComputeRequest, Phase};
use super::mode::{EvaluatorMode, EvaluatorParts, EvaluatorStart, GarblerMode, GarblerParts, GarblerSwitches, StartContext};
use super::plan::Plan;
use super::standard::{StandardEvaluator, StandardGarbler};
use super::SessionError;

/// Starts the computation `request` asks for, in the mode it asks for: the one place that maps
/// a [`Security`] to its module.
pub(super) fn start_garbler(
    request: ComputeRequest,
    plan: Plan,
    context: StartContext,
    switches: &mut GarblerSwitches,
    parts: &mut GarblerParts<'_>,
) -> Result<Box<dyn GarblerMode>, SessionError> {
    Ok(match request.security {
        Security::Standard => {
            Box::new(StandardGarbler::start(request, plan, context.start, parts)?)
        }
        Security::CutAndChoose => {
            #[allow(unused_mut)]
            let mut run = CncGarbler::start(
                request.service,
                parts.engine.scheme(),
                plan.shape,
                plan.garbler_inputs,
                plan.gates,
                plan.stream_topology,
                switches.cnc_encoding,
                FromSession::of_computation(context.hash_seed, context.index, context.ot_k[0]),
                parts.chosen,
                parts.outbox,
                &parts.limits,
                context.start,
            )?;
            #[cfg(feature = "insecure-switches")]
            if let Some(deviation) = switches.cnc_deviation.take() {
                run.deviate(deviation);
            }
            Box::new(run)
        }
        Security::Authenticated => {
            #[allow(unused_mut)]
            let mut run = AuthGarbler::start(request, plan, context, parts)?;
            #[cfg(feature = "insecure-switches")]
            run.deviate(switches.auth_known_masks, switches.auth_corrupt_input_check);
            Box::new(run)
        }
    })
}

/// The AND gates a computation of `security` garbles for a circuit of `and_gates`: every copy
/// (cut-and-choose garbles each circuit twice, to commit and to stream, and the recovery
/// circuits; the authenticated mode's preprocessing makes B leaky ANDs per AND gate), checked
/// against the limit before it starts.
/// A computation on a preparation done ahead garbles nothing its preparation was not charged for.
pub(super) fn garbled_for(security: Security, phase: Phase, and_gates: u64) -> u64 {
    if matches!(phase, Phase::Prepared { .. }) {
        return 0;
    }
    match security {
        Security::Standard => and_gates,
        Security::CutAndChoose => and_gates.saturating_mul(
            crate::cnc::params::FIXED_CIRCUITS as u64 + crate::cnc::params::FIXED_EVALUATED as u64,
        ),
        Security::Authenticated => authenticated::charged(and_gates),
    }
}

/// Whether a mode runs the phase `request` asks for: only the authenticated mode prepares
/// ahead. Checked by both sessions before anything is sent or started.
pub(super) fn check_phase(request: &ComputeRequest) -> Result<(), SessionError> {
    match (request.security, request.phase) {
        (_, Phase::Whole) | (Security::Authenticated, _) => Ok(()),
        (security, phase) => Err(SessionError::PhaseNotOffered { security, phase: phase.name() }),
    }
}

/// Starts the computation `start` asks for, in the mode its request names: the one place on
/// the evaluator's side that maps a [`Security`] to its module. Nothing is queued unless the
/// computation could start, so a refusal leaves the session usable.
pub(super) fn start_evaluator(start: EvaluatorStart<'_>, parts: &mut EvaluatorParts<'_>) -> Result<Box<dyn EvaluatorMode>, SessionError> {
    Ok(match start.request.security {
        Security::Standard => Box::new(StandardEvaluator::start(start, parts)?),
        Security::CutAndChoose => Box::new(CncEvaluator::start_mode(start, parts)?),
        Security::Authenticated => Box::new(AuthEvaluator::start(start, parts)?),
    })
}

