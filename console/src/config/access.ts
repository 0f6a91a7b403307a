// What the caller's role lets it change here: configuration needs `ManageConfiguration`
// (Administrator, Manager). Screens offer no change the role may not make; the API
// refuses it anyway.
import { session } from '../session';

export function mayConfigure(permissions: readonly string[] | undefined = session()?.Permissions): boolean {
  return !!permissions?.includes('ManageConfiguration');
}
