/**
 * Which workspace folder a new (or continued) session runs in, in a multi-root workspace: the
 * folder of the active editor's file, else the only folder, else the user is asked. Pure.
 */
export type FolderChoice = { ask: false; folder: string | undefined } | { ask: true };

/** The folder to use (undefined with no folder at all), or that the user must be asked. */
export function chooseFolder(folders: readonly string[], activeFolder: string | undefined): FolderChoice {
  if (activeFolder !== undefined && folders.includes(activeFolder)) return { ask: false, folder: activeFolder };
  if (folders.length <= 1) return { ask: false, folder: folders[0] };
  return { ask: true };
}
