//! `collc new KIND NAME [-o FILE]`: a verified starting protocol of a collective kind
//! (`collc_spec::templates`), written to `NAME.coll` (never over an existing file) or, with
//! `-o -`, to stdout.

use crate::output::{exit, Output};

/// Arguments of `collc new`.
#[derive(clap::Args, Debug, Clone)]
pub struct NewArgs {
    /// The collective kind: barrier, broadcast, reduce, allreduce, reduce_scatter,
    /// allgather, gather, scatter, all_to_all, all_to_all_v.
    pub kind: String,
    /// The collective's name (also the file name).
    pub name: String,
    /// Where to write it (`-` for stdout); default `NAME.coll`.
    #[arg(short, long)]
    pub output: Option<String>,
}

/// Writes the starting protocol. Exit: 0 written, 2 unknown kind, bad name or I/O.
pub fn run(args: &NewArgs, out: &mut Output) -> i32 {
    let text = match collc_spec::templates::new(&args.kind, &args.name) {
        Ok(t) => t,
        Err(e) => {
            out.err(format!("error: {e}"));
            return exit::USAGE;
        }
    };
    let path = args
        .output
        .clone()
        .unwrap_or_else(|| format!("{}.coll", args.name));
    if path == "-" {
        out.out(text.trim_end());
        return exit::OK;
    }
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path);
    match file.and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes())) {
        Ok(()) => {
            out.out(format!("wrote {path}: check it with `collc verify {path}`"));
            exit::OK
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            out.err(format!(
                "error: `{path}` exists; collc new never overwrites a file"
            ));
            exit::USAGE
        }
        Err(e) => {
            out.err(format!("error: cannot write `{path}`: {e}"));
            exit::USAGE
        }
    }
}
