// Placeholder until the workdir CLI lands.
export async function main(_argv: string[]): Promise<number> {
  process.stderr.write('workdir: not built yet\n');
  return 2;
}
