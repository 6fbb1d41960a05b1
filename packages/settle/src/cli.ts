// Placeholder until the settle CLI lands: prints usage and refuses.
export async function main(_argv: string[]): Promise<number> {
  process.stderr.write('settle: not built yet\n');
  return 125;
}
