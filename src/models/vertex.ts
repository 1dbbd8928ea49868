import { lookupSetting, type SettingsContext } from "../config/keys.js";
import type { ModelConfig } from "../config/schema.js";
import { UserError } from "../errors.js";
import type { AgentEvent } from "../events.js";
import { AnthropicModel, clientOptions, type MessagesClient } from "./anthropic.js";
import type { ChatModel } from "./chat-model.js";
import { configuredModelName, resolvedConfig } from "./model-setup.js";
import { resolveEndpoint } from "./providers.js";

/** The Messages API version Vertex AI takes, in the body (as litellm sends it). */
export const VERTEX_VERSION = "vertex-2023-10-16";
/** Vertex AI's location when neither the config nor a variable names one (litellm's). */
const DEFAULT_LOCATION = "us-central1";
const SCOPE = "https://www.googleapis.com/auth/cloud-platform";

function kwarg(config: ModelConfig, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = config.model_kwargs[name];
    if (typeof value === "string" && value) return value;
  }
  return undefined;
}

/**
 * Google's application-default credentials, as litellm finds them: model_kwargs.vertex_credentials (a key
 * file's path or its JSON), GOOGLE_APPLICATION_CREDENTIALS (also from .env or swerun's config), gcloud's
 * `application_default_credentials.json`, or the metadata server on Google Cloud. Found now, so that missing
 * credentials stop the run before any call; the project defaults to theirs.
 */
async function googleAuth(config: ModelConfig, modelName: string, settings?: SettingsContext) {
  const { GoogleAuth } = await import("google-auth-library");
  const configured = kwarg(config, "vertex_credentials", "vertex_ai_credentials");
  const keyFile = lookupSetting(["GOOGLE_APPLICATION_CREDENTIALS"], settings)?.value;
  const auth = new GoogleAuth({
    scopes: SCOPE,
    ...(configured?.trimStart().startsWith("{")
      ? { credentials: JSON.parse(configured) }
      : configured || keyFile
        ? { keyFilename: configured ?? keyFile }
        : {}),
  });
  try {
    return { auth, client: await auth.getClient() };
  } catch (error) {
    throw new UserError(
      `model "${modelName}" needs Google Cloud credentials: set GOOGLE_APPLICATION_CREDENTIALS to a key file or run ` +
        `\`gcloud auth application-default login\` (${(error as Error).message.split("\n")[0]})`,
    );
  }
}

/**
 * A Claude model on Google Vertex AI (`vertex_ai/claude-...@<version>`) through the Anthropic SDK's Vertex
 * client (the Messages API body on the model's rawPredict path), or a Gemini model (`vertex_ai/gemini-...`,
 * generateContent, gemini.ts); either way with an access token from the application-default credentials.
 * Project: model_kwargs.vertex_project, VERTEXAI_PROJECT, VERTEX_PROJECT, else the credentials';
 * location: model_kwargs.vertex_location, VERTEXAI_LOCATION, VERTEX_LOCATION, else us-central1; base URL:
 * model_kwargs.api_base or VERTEXAI_API_BASE (the host; `/v1/projects/...` follows), else the location's.
 */
export async function vertexModel(
  config: ModelConfig,
  context: { emit?: (event: AgentEvent) => void; textBased: boolean; settings?: SettingsContext },
): Promise<ChatModel> {
  const modelName = configuredModelName(config, context.settings);
  const endpoint = resolveEndpoint(modelName, config.model_kwargs, { settings: context.settings });
  const gemini = /^gemini/.test(endpoint.model);
  if (!gemini && !/claude/.test(endpoint.model)) {
    throw new UserError(
      `model "${modelName}": swerun runs Claude and Gemini models on Vertex AI (vertex_ai/claude-..., vertex_ai/gemini-...)`,
    );
  }
  const { auth, client: authClient } = await googleAuth(config, modelName, context.settings);
  const { project, location } = await vertexPlace(config, modelName, auth, context.settings);
  const baseURL = endpoint.customBaseURL
    ? `${endpoint.baseURL}/v1`
    : location === "global"
      ? "https://aiplatform.googleapis.com/v1"
      : `https://${location}-aiplatform.googleapis.com/v1`;
  const resolved = resolvedConfig(config, modelName);
  if (gemini) {
    const { geminiOnVertex } = await import("./gemini.js");
    const place = { project, location, baseURL };
    return geminiOnVertex(resolved, { ...endpoint, baseURL }, place, authClient, context);
  }
  const { AnthropicVertex } = await import("@anthropic-ai/vertex-sdk");
  const client = new AnthropicVertex({
    ...clientOptions(config, baseURL),
    region: location,
    projectId: project,
    authClient: authClient as never,
  });
  return new AnthropicModel(resolved, { ...endpoint, baseURL }, client as unknown as MessagesClient, {
    ...context,
    bodyFields: { anthropic_version: VERTEX_VERSION },
  });
}

/** The project and location of a Vertex AI model (see vertexModel). */
async function vertexPlace(
  config: ModelConfig,
  modelName: string,
  auth: { getProjectId(): Promise<string> },
  settings?: SettingsContext,
): Promise<{ project: string; location: string }> {
  const project =
    kwarg(config, "vertex_project", "vertex_ai_project") ??
    lookupSetting(["VERTEXAI_PROJECT", "VERTEX_PROJECT"], settings)?.value ??
    (await auth.getProjectId().catch(() => undefined));
  if (!project) {
    throw new UserError(
      `model "${modelName}" needs a Google Cloud project: set VERTEXAI_PROJECT (or model.model_kwargs.vertex_project)`,
    );
  }
  const location =
    kwarg(config, "vertex_location", "vertex_ai_location") ??
    lookupSetting(["VERTEXAI_LOCATION", "VERTEX_LOCATION"], settings)?.value ??
    DEFAULT_LOCATION;
  return { project, location };
}
