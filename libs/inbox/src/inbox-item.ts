type Item = Record<string, unknown>;

/** An upstream's elicitation that no host could take (docs/relay.md, "The inbox"). */
export interface ElicitationQuestion {
  kind: 'elicitation';
  mode: 'form' | 'url';
  message: string;
  /** Form mode: the restricted JSON schema the answer must follow (already checked). */
  requestedSchema?: Item;
  /** URL mode: where the user is sent, and the upstream's id for the interaction. */
  url?: string;
  elicitationId?: string;
}

/** A tools/call a policy rule with `confirm` holds until a human approves it (docs/approvals.md). */
export interface ApprovalQuestion {
  kind: 'approval';
  /** The public tool name the host called. */
  tool: string;
  /** The arguments as the approver sees them (redacted by the audit rules). */
  arguments: unknown;
  /** Redaction hid parts of them: the page says so. */
  argumentsRedacted?: boolean;
  /**
   * The audit log's digest of the arguments (`arguments_digest` of the call's row, what
   * `switchboard audit digest` gives): absent when the log is off or the call sent none.
   */
  argumentsDigest?: string;
  /** The rule that asked for confirmation. */
  rule: string;
  /**
   * The rule's approvers: roles one of whose members, or an admin, answers; never the caller,
   * who sees the question wait. Absent: the caller (or an admin) answers.
   */
  approvers?: readonly string[];
  /** The durations (ms) the approver may choose to remember the approval for; empty: no choice. */
  rememberChoicesMs: number[];
  /** The digest of the policy it was asked under: a reload to another withdraws it (withdrawStale). */
  policyDigest?: string;
}

/** What is asked, of whom, and for how long. */
export type InboxQuestion = (ElicitationQuestion | ApprovalQuestion) & {
  /** The upstream that asks (elicitation) or whose tool is called (approval). */
  server: string;
  /** Whose request caused it; null when nobody is known, and then only admins see it. */
  principal: string | null;
  timeoutMs: number;
};

/** A pending question as the page shows it. */
export type InboxItem = InboxQuestion & {
  id: string;
  createdAt: number;
  expiresAt: number;
};

/** A human's answer. Elicitations take accept/decline/cancel, approvals approve/decline. */
export type InboxAnswer =
  | { action: 'accept'; content?: Item }
  | { action: 'decline' }
  | { action: 'cancel' }
  | { action: 'approve'; rememberForMs?: number };

/** How a question ended: answered (and by whom), or not. */
export type InboxOutcome =
  | (InboxAnswer & { answeredBy: string })
  /** Nobody answered in time. */
  | { action: 'expired' }
  /** The asker stopped waiting (its request was cancelled or timed out) or the daemon is stopping. */
  | { action: 'withdrawn' }
  /** An approval asked under a policy no longer in force: the new one may ask otherwise, or not at all. */
  | { action: 'stale' };

/** Who is looking at the inbox: admins see and answer everything, others what concerns them. */
export interface InboxViewer {
  principal: string;
  admin: boolean;
  /** Its roles under the policy in force now (a reload may change them); for approvals with approvers. */
  roles?: () => readonly string[];
}

/** A pending question as one viewer gets it: whether that viewer may answer it (the caller of an approval with approvers may not). */
export type ViewedItem = InboxItem & { answerable: boolean };

export type InboxEvent =
  | { type: 'added'; item: InboxItem }
  | { type: 'removed'; id: string; principal: string | null; approvers?: readonly string[]; outcome: InboxOutcome['action'] };

/** Why an answer was not taken: the HTTP status that says so, and the reasons. */
export interface AnswerRefusal {
  status: 400 | 403 | 404;
  problems: string[];
  /** For the audit log only (the caller is told 404 either way): whose pending question it was. */
  othersQuestion?: { principal: string | null };
  /** For the audit log: an answer to the viewer's own call (or a name-alike's) that someone else must approve (403). */
  ownApproval?: { principal: string | null };
}
