import { asyncBufferFromFile, parquetReadObjects } from "hyparquet";
import { compressors } from "hyparquet-compressors";
import { UserError } from "../errors.js";

/**
 * The rows of a parquet file as plain JSON-like objects: integers that fit a double become numbers (larger
 * ones become decimal strings), timestamps become ISO strings; lists and structs stay arrays and objects.
 * Snappy, zstd, gzip, brotli and lz4 pages are decompressed in TypeScript.
 */
export async function readParquetRows(path: string): Promise<Array<Record<string, unknown>>> {
  let rows: Array<Record<string, unknown>>;
  try {
    const file = await asyncBufferFromFile(path);
    rows = await parquetReadObjects({ file, compressors });
  } catch (error) {
    throw new UserError(`${path}: not a readable parquet file (${(error as Error).message})`);
  }
  return rows.map((row) => plain(row) as Record<string, unknown>);
}

function plain(value: unknown): unknown {
  if (typeof value === "bigint") {
    return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(value)
      : value.toString();
  }
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === "object" && !ArrayBuffer.isView(value)) {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, plain(inner)]));
  }
  return value;
}
