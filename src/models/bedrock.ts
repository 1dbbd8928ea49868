import { lookupSetting, type SettingsContext } from "../config/keys.js";
import type { ModelConfig } from "../config/schema.js";
import { UserError } from "../errors.js";
import type { AgentEvent } from "../events.js";
import { registerCredential } from "../util/secrets.js";
import { AnthropicModel, clientOptions, type MessagesClient } from "./anthropic.js";
import { configuredModelName, resolvedConfig } from "./model-setup.js";
import { resolveEndpoint } from "./providers.js";

/** The Messages API version Bedrock takes, in the body (as litellm sends it). */
export const BEDROCK_VERSION = "bedrock-2023-05-31";

function kwarg(config: ModelConfig, name: string): string | undefined {
  const value = config.model_kwargs[name];
  return typeof value === "string" && value ? value : undefined;
}

/**
 * How the client signs: a Bedrock API key (AWS_BEARER_TOKEN_BEDROCK), static keys (model_kwargs or
 * AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY in the environment, .env or swerun's config), else the standard AWS
 * credential chain (profiles, SSO, web identity, container and instance roles), resolved now so that missing
 * credentials stop the run before any call.
 */
async function credentials(config: ModelConfig, modelName: string, settings?: SettingsContext) {
  const bearer = lookupSetting(["AWS_BEARER_TOKEN_BEDROCK"], settings)?.value;
  if (bearer) return { apiKey: bearer };
  const accessKey =
    kwarg(config, "aws_access_key_id") ?? lookupSetting(["AWS_ACCESS_KEY_ID"], settings)?.value;
  const secretKey =
    kwarg(config, "aws_secret_access_key") ?? lookupSetting(["AWS_SECRET_ACCESS_KEY"], settings)?.value;
  if (accessKey && secretKey) {
    const sessionToken =
      kwarg(config, "aws_session_token") ?? lookupSetting(["AWS_SESSION_TOKEN"], settings)?.value;
    return {
      apiKey: null,
      awsAccessKey: accessKey,
      awsSecretKey: secretKey,
      awsSessionToken: sessionToken ?? null,
    };
  }
  const { createCredentialChain, fromEnv, fromNodeProviderChain } = await import(
    "@aws-sdk/credential-providers"
  );
  const chain = createCredentialChain(fromEnv(), fromNodeProviderChain());
  try {
    const found = await chain();
    registerCredential(found.secretAccessKey);
    registerCredential(found.sessionToken);
  } catch (error) {
    throw new UserError(
      `model "${modelName}" needs AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, ` +
        `or AWS_BEARER_TOKEN_BEDROCK (the AWS credential chain found none: ${(error as Error).message.split("\n")[0]})`,
    );
  }
  return { apiKey: null, providerChainResolver: async () => chain };
}

/**
 * A Claude model on AWS Bedrock (`bedrock/<model id>`, litellm's `bedrock/invoke/<model id>` too) through the
 * Anthropic SDK's Bedrock client: the Messages API body on the model's invoke path, SigV4-signed for the region
 * (model_kwargs.aws_region_name, AWS_REGION_NAME, AWS_REGION or AWS_DEFAULT_REGION). The base URL:
 * model_kwargs.aws_bedrock_runtime_endpoint or api_base, else AWS_BEDROCK_RUNTIME_ENDPOINT, else the region's.
 */
export async function bedrockModel(
  config: ModelConfig,
  context: { emit?: (event: AgentEvent) => void; textBased: boolean; settings?: SettingsContext },
): Promise<AnthropicModel> {
  const modelName = configuredModelName(config, context.settings);
  const endpoint = resolveEndpoint(modelName, config.model_kwargs, { settings: context.settings });
  if (!/anthropic\.|claude/.test(endpoint.model)) {
    throw new UserError(
      `model "${modelName}": swerun runs Claude models on Bedrock (bedrock/<region.>anthropic.claude-...); for other Bedrock models use an OpenAI-compatible gateway (a LiteLLM proxy: litellm_proxy/...)`,
    );
  }
  const region =
    kwarg(config, "aws_region_name") ??
    lookupSetting(["AWS_REGION_NAME", "AWS_REGION", "AWS_DEFAULT_REGION"], context.settings)?.value;
  if (!region) {
    throw new UserError(
      `model "${modelName}" needs an AWS region: set AWS_REGION (or model.model_kwargs.aws_region_name)`,
    );
  }
  const auth = await credentials(config, modelName, context.settings);
  registerCredential(auth.apiKey ?? undefined);
  registerCredential("awsSecretKey" in auth ? auth.awsSecretKey : undefined);
  registerCredential("awsSessionToken" in auth ? (auth.awsSessionToken ?? undefined) : undefined);
  const baseURL = endpoint.customBaseURL
    ? endpoint.baseURL
    : `https://bedrock-runtime.${region}.amazonaws.com`;
  const { AnthropicBedrock } = await import("@anthropic-ai/bedrock-sdk");
  const client = new AnthropicBedrock({
    ...clientOptions(config, baseURL),
    awsRegion: region,
    ...auth,
  } as never);
  return new AnthropicModel(
    resolvedConfig(config, modelName),
    { ...endpoint, baseURL },
    client as unknown as MessagesClient,
    {
      ...context,
      bodyFields: { anthropic_version: BEDROCK_VERSION },
    },
  );
}
