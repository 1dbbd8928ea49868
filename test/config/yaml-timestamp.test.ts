import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseConfigText } from "../../src/config/config-file.js";
import { loadConfig } from "../../src/config/load.js";
import { pythonTimestampText } from "../../src/config/yaml-timestamp.js";
import { tempDir } from "../helpers/tmp.js";

// What PyYAML 6.0 (yaml.safe_load) reads from each scalar, as Python's str() prints it, from running it:
// python -c "import yaml; print({k: str(v) for k, v in yaml.safe_load(text).items()})".
const PYYAML = {
  "2024-06-01": "2024-06-01",
  "2001-12-14t21:59:43.10-05:00": "2001-12-14 21:59:43.100000-05:00",
  "2001-12-14 21:59:43.10": "2001-12-14 21:59:43.100000",
  "2002-12-14": "2002-12-14",
  "2024-6-1": "2024-6-1",
};

describe("YAML timestamps in a config", () => {
  it("read as the text Python's str() gives PyYAML's date or datetime", () => {
    const text = Object.keys(PYYAML)
      .map((source, index) => `k${index}: ${source}`)
      .join("\n");
    const read = parseConfigText(text) as Record<string, unknown>;
    expect(Object.values(read)).toEqual(Object.values(PYYAML));
    expect(pythonTimestampText("2001-12-14T21:59:43Z")).toBe("2001-12-14 21:59:43+00:00");
    expect(pythonTimestampText("2001-12-14 1:02:03.0")).toBe("2001-12-14 01:02:03");
  });

  it("an unquoted Azure api_version reaches the model config as its text", () => {
    const dir = tempDir();
    const path = join(dir, "azure.yaml");
    writeFileSync(path, "model:\n  model_name: azure/gpt-4o\n  model_kwargs:\n    api_version: 2024-06-01\n");
    const config = loadConfig(["default", path]);
    expect(config.model.model_kwargs.api_version).toBe("2024-06-01");
  });
});
