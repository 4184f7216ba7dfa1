/**
 * The role a principal needs for the admin API when `auth.mode` is `required` (the inbox shows
 * it everyone's questions). Here rather than in libs/admin so that the CLI (`keys create`,
 * which knows it as a role with a meaning of its own) need not load the admin module.
 */
export const ADMIN_ROLE = 'admin';
