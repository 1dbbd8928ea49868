import { apiStatus, clusterError, type KubeClient } from "./client.js";
import { anchorName, POD_ANNOTATIONS, runLabels } from "./pod-spec.js";

/** The object a run's pods belong to: delete it, and the cluster's garbage collector deletes them all. */
export interface RunAnchor {
  name: string;
  uid: string;
}

interface Held {
  anchor: Promise<RunAnchor>;
  users: number;
}

const held = new Map<string, Held>();

function keyOf(client: KubeClient, runId: string): string {
  return `${client.server} ${client.namespace} ${runId}`;
}

/**
 * The anchor ConfigMap of run `runId` in this process, created by its first user (one per process and run:
 * a resumed run's pods are not tied to what a killed one left), labelled like the run's pods. Each
 * `acquireRunAnchor` is paired with a `releaseRunAnchor`; the last release deletes it.
 */
export function acquireRunAnchor(client: KubeClient, runId: string): Promise<RunAnchor> {
  const key = keyOf(client, runId);
  let entry = held.get(key);
  if (!entry) {
    const created: Held = { anchor: createAnchor(client, runId), users: 0 };
    created.anchor.catch(() => {
      if (held.get(key) === created) held.delete(key);
    });
    held.set(key, created);
    entry = created;
  } else {
    // Someone may have deleted it (`swerun cleanup` of the run): a pod owned by a deleted object would be
    // deleted at once, so a new anchor replaces it.
    entry.anchor = entry.anchor.then(async (anchor) =>
      (await stillThere(client, anchor)) ? anchor : createAnchor(client, runId),
    );
  }
  entry.users++;
  return entry.anchor;
}

/** Whether `anchor` (that very object, by uid) still exists. */
async function stillThere(client: KubeClient, anchor: RunAnchor): Promise<boolean> {
  try {
    const found = await client.core.readNamespacedConfigMap({
      name: anchor.name,
      namespace: client.namespace,
    });
    return found.metadata?.uid === anchor.uid && !found.metadata?.deletionTimestamp;
  } catch (error) {
    if (apiStatus(error) === 404) return false;
    throw clusterError(client, `reading the run's ConfigMap ${anchor.name}`, error);
  }
}

/**
 * One user of the run's anchor is done. The last one deletes it (a user that comes later makes a new one);
 * the cluster then deletes whatever pod of the run is left. Never throws.
 */
export async function releaseRunAnchor(client: KubeClient, runId: string): Promise<void> {
  const key = keyOf(client, runId);
  const entry = held.get(key);
  if (!entry) return;
  entry.users--;
  if (entry.users > 0) return;
  held.delete(key);
  const anchor = await entry.anchor.catch(() => undefined);
  if (!anchor) return;
  await client.core
    .deleteNamespacedConfigMap({
      name: anchor.name,
      namespace: client.namespace,
      propagationPolicy: "Background",
    })
    .catch(() => {});
}

async function createAnchor(client: KubeClient, runId: string): Promise<RunAnchor> {
  const name = anchorName(runId);
  try {
    const created = await client.core.createNamespacedConfigMap({
      namespace: client.namespace,
      body: {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name, labels: runLabels(runId), annotations: { [POD_ANNOTATIONS.runId]: runId } },
        data: {
          about:
            "swerun's pods of this run belong to this object: deleting it deletes them (swerun cleanup does).",
        },
      },
    });
    return { name, uid: created.metadata?.uid ?? "" };
  } catch (error) {
    throw clusterError(client, `creating the run's ConfigMap ${name}`, error);
  }
}
