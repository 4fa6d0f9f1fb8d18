/** The only place that prompts. Callers check ctx.interactive first: never prompt without a TTY. */
export async function confirm(message: string, defaultValue = false): Promise<boolean> {
  const { confirm: ask } = await import('@inquirer/prompts');
  return ask({ message, default: defaultValue }, { output: process.stderr });
}
