export const pending = true;
