/**
 * Local accounts as ActivityPub actors, the way Mastodon serves them: a Person (a Service for
 * bots) with its inbox, shared inbox, outbox, followers, following and featured collections, the
 * RSA key as `publicKey` (`#main-key`), the profile's display name, bio and fields (as
 * PropertyValue), avatar and header, and Mastodon's flags (`manuallyApprovesFollowers`,
 * `discoverable`, `indexable`, `memorial`, `suspended`). The display values come from the
 * account's API entity, so both speak of the profile alike.
 */
import { createPrivateKey, createPublicKey, type JsonWebKey, type webcrypto } from "node:crypto";
import { importJwk, type Context } from "@fedify/fedify";
import {
  Emoji,
  Endpoints,
  Image,
  Person,
  PropertyValue,
  Service,
  type CryptographicKey,
  type Multikey,
} from "@fedify/vocab";
import { Temporal } from "@js-temporal/polyfill";
import { accountAliases } from "../db/columns.ts";
import type { AccountRow } from "../db/schema.ts";
import { mediaTypeOfName } from "../media/types.ts";
import type { Ctx } from "../context.ts";
import { serializeAccount, type Account } from "../entities/account.ts";

/** The account's key pair as Web Crypto keys (RSASSA-PKCS1-v1_5, SHA-256), for signing and `publicKey`. */
export async function keyPairOf(
  row: Pick<AccountRow, "public_key" | "private_key">,
): Promise<webcrypto.CryptoKeyPair | undefined> {
  if (!row.private_key || !row.public_key) return undefined;
  const privateJwk = createPrivateKey(row.private_key).export({ format: "jwk" });
  const publicJwk = createPublicKey(row.public_key).export({ format: "jwk" });
  const algorithm = { alg: "RS256" };
  return {
    privateKey: await importJwk({ ...privateJwk, ...algorithm } as JsonWebKey, "private"),
    publicKey: await importJwk({ ...publicJwk, ...algorithm } as JsonWebKey, "public"),
  };
}

/** A local account's Ed25519 key pair (stored as PEM) as Web Crypto keys, for object integrity proofs. */
export async function ed25519PairOf(pem: { privateKey: string; publicKey: string }): Promise<webcrypto.CryptoKeyPair> {
  const privateJwk = createPrivateKey(pem.privateKey).export({ format: "jwk" });
  const publicJwk = createPublicKey(pem.publicKey).export({ format: "jwk" });
  return {
    privateKey: await importJwk(privateJwk as JsonWebKey, "private"),
    publicKey: await importJwk(publicJwk as JsonWebKey, "public"),
  };
}

const image = (url: string, description: string) =>
  new Image({ url: new URL(url), name: description || null, mediaType: mediaTypeOfName(url) ?? null });

export interface ActorParts {
  row: AccountRow;
  /** The account's API entity (display name, bio and fields as HTML, pictures, flags). */
  entity: Account;
  /** The key as Fedify publishes it (`ctx.getActorKeyPairs(…)[0].cryptographicKey`). */
  publicKey: CryptographicKey | null;
  /** Every key as a Multikey (`assertionMethod`, FEP-521a): the RSA key and the Ed25519 one. */
  assertionMethods?: Multikey[];
  sharedInbox: URL;
}

/** The actor document of a local account. */
export function actorOf({ row, entity, publicKey, assertionMethods = [], sharedInbox }: ActorParts): Person | Service {
  const suspended = Boolean(row.suspended_at);
  const values = {
    id: new URL(row.uri),
    preferredUsername: row.username,
    name: suspended ? "" : entity.display_name,
    summary: suspended ? "" : entity.note,
    url: new URL(entity.url),
    inbox: row.inbox_url ? new URL(row.inbox_url) : null,
    outbox: row.outbox_url ? new URL(row.outbox_url) : null,
    followers: row.followers_url ? new URL(row.followers_url) : null,
    following: row.following_url ? new URL(row.following_url) : null,
    featured: row.featured_url ? new URL(row.featured_url) : null,
    featuredTags: row.domain === null ? new URL(`${row.uri}/collections/tags`) : null,
    endpoints: new Endpoints({ sharedInbox }),
    publicKey,
    assertionMethods,
    manuallyApprovesFollowers: entity.locked,
    discoverable: entity.discoverable ?? false,
    indexable: entity.indexable,
    memorial: entity.memorial === true,
    suspended,
    // Where it moved, and its accounts elsewhere (a Move to it is accepted only from those).
    successor: !suspended && entity.moved ? new URL(entity.moved.uri) : null,
    aliases: accountAliases(row).map((uri) => new URL(uri)),
    published: Temporal.Instant.from(new Date(row.created_at).toISOString()),
    // Only pictures the user chose: the default ones are the API's, not the actor's.
    icon: suspended || !row.avatar_file ? null : image(entity.avatar, entity.avatar_description),
    image: suspended || !row.header_file ? null : image(entity.header, entity.header_description),
    attachments: suspended
      ? []
      : entity.fields.map((field) => new PropertyValue({ name: field.name, value: field.value })),
    // The custom emoji its name, bio and fields use, so other servers can show them.
    tags: suspended
      ? []
      : entity.emojis.map(
          (emoji) =>
            new Emoji({
              id: new URL(emoji.url),
              name: `:${emoji.shortcode}:`,
              icon: new Image({ url: new URL(emoji.url), mediaType: mediaTypeOfName(emoji.url) ?? null }),
            }),
        ),
  };
  return entity.bot ? new Service(values) : new Person(values);
}

/** The actor document of the local account `row`, as its id serves it and as Update carries it. */
export async function localActor(ctx: Ctx, fedCtx: Context<void>, row: AccountRow): Promise<Person | Service> {
  const [entity, pairs] = await Promise.all([serializeAccount(ctx, row), fedCtx.getActorKeyPairs(row.username)]);
  return actorOf({
    row,
    entity,
    publicKey: pairs[0]?.cryptographicKey ?? null,
    assertionMethods: pairs.map((pair) => pair.multikey),
    sharedInbox: new URL(`${ctx.config.baseUrl}/inbox`),
  });
}
