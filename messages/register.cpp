// Registration of the actorps types and errors.
#include "messages/register.hpp"

#include "common/errc.hpp"
#include "messages/type_ids.hpp"

#include <caf/actor_system_config.hpp>
#include <caf/message.hpp>

namespace actorps {

void register_types(caf::actor_system_config& cfg) {
  cfg.add_message_types<caf::id_block::actorps>();
  cfg.add_error_category(caf::atom("actorps"),
                         [](uint8_t code, caf::atom_value, const caf::message& ctx) {
                           return describe(caf::error{code, caf::atom("actorps"), ctx});
                         });
}

} // namespace actorps
