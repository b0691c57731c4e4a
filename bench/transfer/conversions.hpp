// The 16-bit wire conversions against memcpy (actorps-bench-transfer's last rows).
#pragma once

namespace actorps::bench {

// GB/s (of fp32 bytes) of each 16-bit conversion of a 1 MiB float tensor, and of memcpy.
void conversions(double seconds);

} // namespace actorps::bench
