/**
 * Named pause points for crash tests (`place:after-lock`, `download:mid`, …):
 * state-changing code calls checkpoint(ctx, name) at the moments a kill -9 is
 * worth testing. In production `ctx.checkpoint` is unset and this is one
 * property lookup. The crash tests set it through the test preload
 * (test/helpers/seams-preload.cjs, read by src/cli/test-seams.ts): it records the
 * pid and waits to be killed. Core reads no environment variable for it.
 */
export interface CheckpointHost {
  checkpoint?: ((point: string) => void | Promise<void>) | undefined;
}

export async function checkpoint(host: CheckpointHost, point: string): Promise<void> {
  if (host.checkpoint) await host.checkpoint(point);
}
