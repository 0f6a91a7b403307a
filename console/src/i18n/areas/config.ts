// The config screens' strings: `en` is the reference, every other language has exactly its keys.
export const en = {
} as const;

export const fr: Record<keyof typeof en, string> = {
};
