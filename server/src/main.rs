//! `garblet`: the Garblet server, native client, circuit tools and benchmarks.

mod bench;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "garblet", version, about = "Secure two-party computation with garbled circuits")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Benchmarks (numbers, not pass/fail).
    #[command(subcommand)]
    Bench(BenchCommand),
}

#[derive(Subcommand)]
enum BenchCommand {}

fn main() {
    let cli = Cli::parse();
    match cli.command {
        Command::Bench(b) => match b {},
    }
}
