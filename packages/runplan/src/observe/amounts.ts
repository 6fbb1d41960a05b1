// Tokens and dollars as the live table and its footer show them: short, for a narrow cell.

// 950, 12.3k, 4.1M.
export function formatTokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

// $0, $0.0125, $3.40.
export function formatCost(usd: number): string {
  if (usd === 0) return '$0';
  return `$${usd.toFixed(usd < 1 ? 4 : 2)}`;
}
