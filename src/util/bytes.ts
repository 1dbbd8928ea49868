const UNITS: Record<string, number> = {
  "": 1,
  B: 1,
  K: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  KI: 1024,
  MI: 1024 ** 2,
  GI: 1024 ** 3,
  TI: 1024 ** 4,
};

/**
 * Bytes from a size as people write it: `120G`, `1.5T`, `500MB`, `120GiB`, or a plain number of bytes.
 * K, M, G, T are powers of 1000 (as Docker shows sizes), Ki, Mi, Gi, Ti powers of 1024. Undefined when
 * it is not a size.
 */
export function parseSize(value: string | number): number | undefined {
  if (typeof value === "number") return Number.isFinite(value) && value > 0 ? Math.floor(value) : undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]i?)?b?\s*$/i.exec(value);
  if (!match) return undefined;
  const bytes = Number(match[1]) * (UNITS[(match[2] ?? "").toUpperCase()] ?? Number.NaN);
  return Number.isFinite(bytes) && bytes > 0 ? Math.floor(bytes) : undefined;
}

/** "1.50 GB", "320.0 MB", "12.3 kB": powers of 1000, as Docker shows image sizes. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(2)} GB`;
  if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(1)} MB`;
  if (bytes >= 1e3) return `${(bytes / 1e3).toFixed(1)} kB`;
  return `${bytes} B`;
}
