//! What a built-in program is to the rest of the system: its name, its public parameters with
//! their ranges, how it is built from them, and how a service's garbler secret becomes its
//! inputs. The library's programs declare these; the registry lists them.

use crate::gate::Party;
use crate::program::{BuildError, InputField, Program, Shape};
use std::collections::BTreeMap;

/// One public parameter of a program.
#[derive(Clone, Copy, Debug)]
pub struct ParamSpec {
    pub name: &'static str,
    pub doc: &'static str,
    pub default: u64,
    pub min: u64,
    pub max: u64,
}

/// Resolved parameters: every parameter of the program, within its range.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Params(BTreeMap<String, u64>);

impl Params {
    /// The value of a parameter the program declares (0 if it does not).
    pub fn get(&self, name: &str) -> u64 {
        self.0.get(name).copied().unwrap_or(0)
    }

    pub fn usize(&self, name: &str) -> usize {
        self.get(name) as usize
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> {
        self.0.iter().map(|(k, v)| (k.as_str(), *v))
    }
}

/// The garbler's secret as a service holds it, when the circuit takes something derived from it
/// in the clear (the AES round keys from the key, BLOSUM62 rows from a protein string).
#[derive(Clone, Copy)]
pub struct GarblerSecret {
    /// The fields a service configures, in order.
    pub fields: fn(&Params) -> Vec<InputField>,
    /// The circuit's garbler input bits, from the fields' bits concatenated.
    pub derive: fn(&Params, &[bool]) -> Result<Vec<bool>, BuildError>,
}

/// A built-in program.
#[derive(Clone, Copy)]
pub struct ProgramSpec {
    pub name: &'static str,
    pub doc: &'static str,
    pub params: &'static [ParamSpec],
    pub build: fn(&Params) -> Result<Box<dyn Program>, BuildError>,
    pub garbler_secret: Option<GarblerSecret>,
}

impl ProgramSpec {
    /// Fills in defaults and checks names and ranges.
    pub fn resolve<'a>(&self, given: impl IntoIterator<Item = (&'a str, u64)>) -> Result<Params, BuildError> {
        let mut params: BTreeMap<String, u64> = self.params.iter().map(|p| (p.name.to_string(), p.default)).collect();
        for (name, value) in given {
            let spec = self.params.iter().find(|p| p.name == name).ok_or_else(|| BuildError::UnknownParameter {
                program: self.name,
                name: name.to_string(),
                known: self.params.iter().map(|p| p.name).collect(),
            })?;
            if value < spec.min || value > spec.max {
                return Err(BuildError::ParameterOutOfRange { program: self.name, name: name.to_string(), value, min: spec.min, max: spec.max });
            }
            params.insert(name.to_string(), value);
        }
        Ok(Params(params))
    }

    pub fn instantiate(&self, params: &Params) -> Result<Box<dyn Program>, BuildError> {
        (self.build)(params)
    }

    /// The garbler's input fields as a service configures them: the secret's fields if the
    /// program derives its garbler input, else the circuit's garbler fields.
    pub fn garbler_fields(&self, params: &Params, shape: &Shape) -> Vec<InputField> {
        match &self.garbler_secret {
            Some(secret) => (secret.fields)(params),
            None => shape.inputs_of(Party::Garbler).cloned().collect(),
        }
    }

    /// The circuit's garbler input bits from the configured fields' bits (concatenated).
    pub fn garbler_bits(&self, params: &Params, configured: Vec<bool>) -> Result<Vec<bool>, BuildError> {
        match &self.garbler_secret {
            Some(secret) => (secret.derive)(params, &configured),
            None => Ok(configured),
        }
    }
}
