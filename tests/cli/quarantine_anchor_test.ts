/** Damage kinds 4-6 (changed candidate hash, deleted anchored record, symlink to outside). */
import { damageRoundTrip, DAMAGES } from "../helpers/damage_cases.ts";

for (const d of DAMAGES.slice(3)) {
  Deno.test(`damage: ${d.name} is detected, blocks canonical writes, and round-trips`, async () => {
    await damageRoundTrip(d);
  });
}
