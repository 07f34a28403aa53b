/**
 * A remote actor's document → what services/accounts/remote.ts stores, read the way Mastodon reads
 * Mastodon, GoToSocial, Misskey and Akkoma actors: `preferredUsername`, `name`, `summary`,
 * `PropertyValue` attachments, icon and image, the collections, `endpoints.sharedInbox`, the key
 * (which must belong to the actor itself) and the toot: flags. An actor without an id, an inbox, a
 * username or its own key is refused (ActorRefused).
 */
import { webcrypto } from "node:crypto";
import type { DocumentLoader } from "@fedify/fedify";
import { Application, Group, Image, Link, Organization, PropertyValue, Service, type Actor } from "@fedify/vocab";
import type { RemoteAccountData } from "../services/accounts/remote.ts";

export class ActorRefused extends Error {
  override name = "ActorRefused";
}

/** Options for reading what an actor only links to (its key, its pictures). */
export interface ReadOptions {
  documentLoader?: DocumentLoader;
  contextLoader?: DocumentLoader;
  /** The handle's domain, when WebFinger told it; the actor id's host otherwise. */
  domain?: string;
}

const text = (value: unknown): string => (value === null || value === undefined ? "" : String(value));

function typeOf(actor: Actor): RemoteAccountData["actorType"] {
  if (actor instanceof Service) return "Service";
  if (actor instanceof Application) return "Application";
  if (actor instanceof Group) return "Group";
  if (actor instanceof Organization) return "Organization";
  return "Person";
}

function hrefOf(value: URL | Link | null | undefined): string | null {
  if (!value) return null;
  if (value instanceof URL) return value.href;
  return value.href?.href ?? null;
}

async function pictureUrl(picture: Promise<Image | URL | Link | null>): Promise<string | null> {
  const found = await picture.catch(() => null);
  if (!found) return null;
  if (found instanceof Image) {
    const url = found.url;
    return url instanceof URL ? url.href : hrefOf(url);
  }
  return hrefOf(found);
}

function sameHost(href: string | null, id: URL): string | null {
  if (!href) return null;
  try {
    return new URL(href).host === id.host ? href : null;
  } catch {
    return null;
  }
}

function pem(spki: ArrayBuffer): string {
  const lines =
    Buffer.from(spki)
      .toString("base64")
      .match(/.{1,64}/g) ?? [];
  return `-----BEGIN PUBLIC KEY-----\n${lines.join("\n")}\n-----END PUBLIC KEY-----\n`;
}

/** Reads `actor` into the fields of a remote account. */
export async function remoteAccountData(actor: Actor, options: ReadOptions = {}): Promise<RemoteAccountData> {
  const id = actor.id;
  if (!id) throw new ActorRefused("the actor has no id");
  const username = text(actor.preferredUsername).trim();
  if (!username) throw new ActorRefused(`${id.href} has no preferredUsername`);
  const inbox = actor.inboxId;
  if (!inbox) throw new ActorRefused(`${id.href} has no inbox`);
  const loaders = { documentLoader: options.documentLoader, contextLoader: options.contextLoader };
  const key = await actor.getPublicKey({ ...loaders, suppressError: true });
  if (!key?.publicKey || key.ownerId?.href !== id.href) throw new ActorRefused(`${id.href} has no key of its own`);
  const fields: RemoteAccountData["fields"] = [];
  for await (const attachment of actor.getAttachments({ ...loaders, suppressError: true }))
    if (attachment instanceof PropertyValue)
      fields.push({ name: text(attachment.name), value: text(attachment.value) });
  const published = actor.published;
  return {
    uri: id.href,
    username,
    domain: (options.domain ?? id.host).toLowerCase(),
    actorType: typeOf(actor),
    displayName: text(actor.name),
    note: text(actor.summary),
    fields,
    // A profile page elsewhere than the actor is ignored, as Mastodon does.
    url: sameHost(hrefOf(actor.url), id) ?? id.href,
    inbox: inbox.href,
    sharedInbox: actor.endpoints?.sharedInbox?.href ?? null,
    outbox: actor.outboxId?.href ?? null,
    followers: actor.followersId?.href ?? null,
    following: actor.followingId?.href ?? null,
    featured: actor.featuredId?.href ?? null,
    publicKey: pem(await webcrypto.subtle.exportKey("spki", key.publicKey)),
    locked: actor.manuallyApprovesFollowers === true,
    discoverable: actor.discoverable ?? null,
    indexable: actor.indexable === true,
    memorial: actor.memorial === true,
    avatarUrl: await pictureUrl(actor.getIcon({ ...loaders, suppressError: true })),
    headerUrl: await pictureUrl(actor.getImage({ ...loaders, suppressError: true })),
    published: published ? new Date(published.epochMilliseconds) : null,
  };
}
