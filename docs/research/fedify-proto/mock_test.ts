import assert from "node:assert/strict";
import { createFederation } from "@fedify/testing";
import { Create, Follow, Note, Person, Accept } from "@fedify/vocab";
const fed = createFederation<{ db: string }>({ contextData: { db: "x" }, origin: "https://a.test" });
const seen: string[] = [];
fed.setActorDispatcher("/users/{identifier}", (ctx, id) => new Person({ id: ctx.getActorUri(id), preferredUsername: id }));
fed.setInboxListeners("/users/{identifier}/inbox", "/inbox").on(Follow, async (ctx, follow) => {
  seen.push(`follow ${follow.actorId?.href} recipient=${ctx.recipient}`);
  await ctx.sendActivity({ identifier: "alice" }, new Person({ id: follow.actorId!, inbox: new URL("https://b.test/inbox") }) as any,
    new Accept({ id: new URL("https://a.test/accepts/1"), actor: ctx.getActorUri("alice"), object: follow }));
});
await fed.receiveActivity(new Follow({ id: new URL("https://b.test/follows/1"), actor: new URL("https://b.test/users/bob"), object: new URL("https://a.test/users/alice") }));
console.log(seen, fed.sentActivities.map((s) => [s.queued, s.queue, s.activity.constructor.name, s.activity.id?.href]));
const ctx = fed.createContext(new URL("https://a.test"), { db: "x" });
await ctx.sendActivity({ identifier: "alice" }, "followers" as any, new Create({ id: new URL("https://a.test/c/1"), actor: ctx.getActorUri("alice"), object: new Note({ content: "hi" }) })).catch((e) => console.log("followers send:", e.message));
console.log("getSentActivities:", ctx.getSentActivities().length, "total sent:", fed.sentActivities.length);
