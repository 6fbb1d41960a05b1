// Placeholder until the run-hook CLI lands.
export async function main(_argv: string[]): Promise<number> {
  process.stderr.write('run-hook: not built yet\n');
  return 2;
}
