// Placeholder until the journal CLI lands.
export async function main(_argv: string[]): Promise<number> {
  process.stderr.write('journal: not built yet\n');
  return 2;
}
