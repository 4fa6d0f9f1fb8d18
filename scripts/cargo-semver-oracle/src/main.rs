//! Reads lines from stdin, each `<tag> <hex of UTF-8 text>`:
//!   `M <hex>`  a version to match requirements against (must parse);
//!   `V <hex>`  a version to parse: prints `V <hex> ok` or `V <hex> err <message>`;
//!   `R <hex>`  a requirement: prints `R <hex> ok <0/1 per M version, in order>`
//!              or `R <hex> err <message>`.
use semver::{Version, VersionReq};
use std::io::{self, BufRead, Write};

fn unhex(s: &str) -> String {
    let bytes: Vec<u8> = (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect();
    String::from_utf8(bytes).unwrap()
}

fn main() {
    let stdin = io::stdin();
    let mut out = io::stdout().lock();
    let mut pool: Vec<Version> = Vec::new();
    for line in stdin.lock().lines() {
        let line = line.unwrap();
        let (tag, hex) = line.split_once(' ').unwrap_or((line.as_str(), ""));
        let text = unhex(hex);
        match tag {
            "M" => pool.push(Version::parse(&text).expect("match pool version must parse")),
            "V" => match Version::parse(&text) {
                Ok(_) => writeln!(out, "V {} ok", hex).unwrap(),
                Err(e) => writeln!(out, "V {} err {}", hex, e).unwrap(),
            },
            "R" => match VersionReq::parse(&text) {
                Ok(req) => {
                    let bits: String = pool.iter().map(|v| if req.matches(v) { '1' } else { '0' }).collect();
                    writeln!(out, "R {} ok {}", hex, bits).unwrap();
                }
                Err(e) => writeln!(out, "R {} err {}", hex, e).unwrap(),
            },
            _ => panic!("bad tag {}", tag),
        }
    }
}
