/**
 * What a server command may be called to be provisioned or built: a plain file
 * name. Its own module so the code that only checks a name (cargo-build, install
 * planning) does not load the binary provisioner and its tar extractor.
 */
export const COMMAND_RE = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;
