// Placeholder until the runplan CLI lands.
export async function main(_argv: string[]): Promise<number> {
  process.stderr.write('runplan: not built yet\n');
  return 2;
}
