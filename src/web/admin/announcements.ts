/**
 * Announcements in the admin area (Mastodon's Admin::AnnouncementsController, Manage
 * Announcements): the list, newest first, with each one's event and whether it is published; a
 * form to write one (published at once or at a set time), to edit one, and buttons to publish,
 * take back (unpublish) or remove it. The same service as `rookery announcements` does the work,
 * so what is published reaches every user's stream and GET /api/v1/announcements the same way.
 * Times are typed and shown in UTC.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Ctx } from "../../context.ts";
import type { AnnouncementRow } from "../../db/schema.ts";
import { ValidationFailed } from "../../errors.ts";
import { toId, toStringParam, toTime } from "../../api/params.ts";
import {
  announcementOf,
  createAnnouncement,
  listAnnouncements,
  removeAnnouncement,
  setAnnouncementPublished,
  updateAnnouncement,
  type AnnouncementParams,
} from "../../services/announcements/announcements.ts";
import { html, type SafeHtml } from "../html.ts";
import { clipped, shortTime } from "./display.ts";
import {
  actionButton,
  checkbox,
  checked,
  field,
  postForm,
  redirectWithNotice,
  renderAdminPage,
  type Staff,
  staffRoutes,
} from "./frame.ts";
import { listPage, pageLinks } from "./paging.ts";

const SECTION = "/admin/announcements";

const NOTICES = {
  published: "The announcement was published.",
  scheduled: "The announcement will be published at the time you set.",
  updated: "The announcement was saved.",
  unpublished: "The announcement was taken back: users no longer see it. You can publish it again.",
  removed: "The announcement was removed.",
};

/** The form's fields as typed, to show the form again as it was. */
interface FormValues {
  text: string;
  starts_at: string;
  ends_at: string;
  all_day: boolean;
  publish_at: string;
}

/** A stored time as a `datetime-local` input shows it (UTC, to the minute). */
const inputTime = (iso: string | null | undefined) => (iso ? new Date(iso).toISOString().slice(0, 16) : "");

function storedValues(row: AnnouncementRow): FormValues {
  return {
    text: row.text,
    starts_at: inputTime(row.starts_at),
    ends_at: inputTime(row.ends_at),
    all_day: row.all_day,
    publish_at: inputTime(row.scheduled_at),
  };
}

function sentValues(req: FastifyRequest): FormValues {
  const text = (name: string) => toStringParam(req.input[name])?.trim() ?? "";
  return {
    text: (toStringParam(req.input.text) ?? "").replace(/\r\n?/g, "\n"),
    starts_at: text("starts_at"),
    ends_at: text("ends_at"),
    all_day: checkbox(req, "all_day"),
    publish_at: text("publish_at"),
  };
}

/**
 * The service's parameters from the form; a time that is no date is refused here, with the
 * others. A time without a zone (what a `datetime-local` input sends) is UTC, as the form says.
 */
function announcementParams(values: FormValues): AnnouncementParams {
  const problems: string[] = [];
  const time = (value: string, label: string) => {
    if (!value) return undefined;
    const zoned = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(value) ? `${value}Z` : value;
    const parsed = toTime(zoned);
    if (!parsed) problems.push(`${label} is not a date and time`);
    return parsed ?? undefined;
  };
  const params = {
    text: values.text,
    startsAt: time(values.starts_at, "Starts at"),
    endsAt: time(values.ends_at, "Ends at"),
    allDay: values.all_day,
    publishAt: time(values.publish_at, "Publish at"),
  };
  if (problems.length > 0) throw new ValidationFailed(problems);
  return params;
}

function state(row: AnnouncementRow): string {
  if (row.published) return `Published ${shortTime(row.published_at)}`;
  if (row.scheduled_at) return `To be published ${shortTime(row.scheduled_at)}`;
  return "Not published";
}

function eventTimes(row: AnnouncementRow): string {
  if (!row.starts_at || !row.ends_at) return "";
  if (row.all_day) return `${row.starts_at.slice(0, 10)} – ${row.ends_at.slice(0, 10)} (all day)`;
  return `${shortTime(row.starts_at)} – ${shortTime(row.ends_at)}`;
}

function announcementsTable(staff: Staff, rows: AnnouncementRow[]): SafeHtml {
  if (rows.length === 0) return html`<p class="empty">No announcements.</p>`;
  const lines = rows.map((row) => {
    // Every row has the same buttons: their names say which announcement they act on.
    const which = `the announcement “${clipped(row.text, 40)}”`;
    const toggle = row.published
      ? actionButton(staff, `${SECTION}/${row.id}/unpublish`, "Unpublish", {
          secondary: true,
          ariaLabel: `Unpublish ${which}`,
        })
      : actionButton(staff, `${SECTION}/${row.id}/publish`, "Publish now", { ariaLabel: `Publish ${which} now` });
    const remove = actionButton(staff, `${SECTION}/${row.id}/delete`, "Remove", {
      danger: true,
      ariaLabel: `Remove ${which}`,
    });
    return html`<tr><td>${clipped(row.text, 200)}</td><td>${eventTimes(row)}</td><td>${state(row)}</td>
<td><a href="${SECTION}/${row.id}/edit" aria-label="${`Edit ${which}`}">Edit</a> ${toggle} ${remove}</td></tr>`;
  });
  return html`<table><thead><tr><th scope="col">Announcement</th><th scope="col">Event (UTC)</th><th scope="col">Status (UTC)</th><th scope="col">Actions</th></tr></thead><tbody>${lines}</tbody></table>`;
}

/** The inputs of the new and edit forms; the publication time only for what is not published yet. */
function announcementFields(values: FormValues, withPublishAt: boolean): SafeHtml {
  return html`<label for="text">Text</label><textarea id="text" name="text" rows="6" required aria-describedby="text_hint">${values.text}</textarea>
<p class="muted" id="text_hint">Mentions, hashtags and links to posts on this server work as in a post.</p>
<fieldset><legend>The event it announces (optional)</legend>
<label for="starts_at">Starts at (UTC)</label><input type="datetime-local" id="starts_at" name="starts_at" value="${values.starts_at}">
<label for="ends_at">Ends at (UTC)</label><input type="datetime-local" id="ends_at" name="ends_at" value="${values.ends_at}">
<label for="all_day"><input type="checkbox" id="all_day" name="all_day" value="1"${checked(values.all_day)}> It lasts whole days (apps show the dates only)</label>
</fieldset>
${
  withPublishAt
    ? html`<label for="publish_at">Publish at (UTC, optional)</label><input type="datetime-local" id="publish_at" name="publish_at" value="${values.publish_at}" aria-describedby="publish_at_hint">
<p class="muted" id="publish_at_hint">Leave it empty to publish now.</p>`
    : ""
}`;
}

export default async function adminAnnouncementRoutes(app: FastifyInstance, ctx: Ctx) {
  const routes = staffRoutes(app, ctx, "manage_announcements");

  function newPage(reply: FastifyReply, staff: Staff, values: FormValues, error?: ValidationFailed) {
    return renderAdminPage(ctx, reply, staff, {
      title: "New announcement",
      section: SECTION,
      status: error ? 422 : undefined,
      alert: error ? `The announcement was not published: ${error.reasons.join(", ")}.` : undefined,
      body: html`${postForm(staff, SECTION, html`${announcementFields(values, true)}<button type="submit">Publish the announcement</button>`)}
<nav><a href="${SECTION}">Back to the announcements</a></nav>`,
    });
  }

  function editPage(
    reply: FastifyReply,
    staff: Staff,
    row: AnnouncementRow,
    values: FormValues,
    error?: ValidationFailed,
  ) {
    const publishHint = row.published
      ? html`<p>This announcement is published: users see the changes at once.</p>`
      : html`<p>This announcement is not published. Set a time to publish it then, or leave the time empty and publish it from the list.</p>`;
    return renderAdminPage(ctx, reply, staff, {
      title: "Edit announcement",
      section: SECTION,
      status: error ? 422 : undefined,
      alert: error ? `The announcement was not saved: ${error.reasons.join(", ")}.` : undefined,
      body: html`${publishHint}${postForm(staff, `${SECTION}/${row.id}`, html`${announcementFields(values, !row.published)}<button type="submit">Save the announcement</button>`)}
<nav><a href="${SECTION}">Back to the announcements</a></nav>`,
    });
  }

  routes.get(SECTION, async (req, reply, staff) => {
    const page = listPage(req);
    const rows = await listAnnouncements(ctx, page);
    return renderAdminPage(ctx, reply, staff, {
      title: "Announcements",
      section: SECTION,
      notices: NOTICES,
      body: html`<p>Announcements are shown to every signed-in user in their apps, until you remove or unpublish them.</p>
<p><a href="${SECTION}/new">Write an announcement</a></p>
${announcementsTable(staff, rows)}${pageLinks(
        SECTION,
        { limit: field(req, "limit") },
        page,
        rows.map((r) => r.id),
      )}`,
    });
  });

  routes.get(`${SECTION}/new`, async (req, reply, staff) => {
    return newPage(reply, staff, { text: "", starts_at: "", ends_at: "", all_day: false, publish_at: "" });
  });

  routes.post(SECTION, async (req, reply, staff) => {
    const values = sentValues(req);
    let row: AnnouncementRow;
    try {
      row = await createAnnouncement(ctx, announcementParams(values), staff.moderator.account.id);
    } catch (error) {
      if (error instanceof ValidationFailed) return newPage(reply, staff, values, error);
      throw error;
    }
    return redirectWithNotice(reply, SECTION, row.published ? "published" : "scheduled");
  });

  routes.get(`${SECTION}/:id/edit`, async (req, reply, staff) => {
    const row = await announcementOf(ctx, toId(req.input.id));
    return editPage(reply, staff, row, storedValues(row));
  });

  routes.post(`${SECTION}/:id`, async (req, reply, staff) => {
    const id = toId(req.input.id);
    const values = sentValues(req);
    try {
      await updateAnnouncement(ctx, staff.moderator.account.id, id, announcementParams(values));
    } catch (error) {
      if (error instanceof ValidationFailed)
        return editPage(reply, staff, await announcementOf(ctx, id), values, error);
      throw error;
    }
    return redirectWithNotice(reply, SECTION, "updated");
  });

  for (const [action, published] of [
    ["publish", true],
    ["unpublish", false],
  ] as const) {
    routes.post(`${SECTION}/:id/${action}`, async (req, reply, staff) => {
      await setAnnouncementPublished(ctx, staff.moderator.account.id, toId(req.input.id), published);
      return redirectWithNotice(reply, SECTION, published ? "published" : "unpublished");
    });
  }

  routes.post(`${SECTION}/:id/delete`, async (req, reply, staff) => {
    await removeAnnouncement(ctx, toId(req.input.id), staff.moderator.account.id);
    return redirectWithNotice(reply, SECTION, "removed");
  });
}
