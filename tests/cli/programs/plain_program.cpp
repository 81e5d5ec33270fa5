// SPDX-License-Identifier: GPL-3.0-or-later
// A native program run as PROGRAM: prints the torchrun contract it sees and a loss per step,
// and reports one extra scalar through the header-only helper on core/wire.
#include "wire/rankdecklog.h"

#include <cstdio>
#include <cstdlib>

int main()
{
    const char *rank = std::getenv("RANK");
    const char *world = std::getenv("WORLD_SIZE");
    const char *port = std::getenv("MASTER_PORT");
    std::printf("native rank=%s world=%s port=%s\n", rank ? rank : "?", world ? world : "?",
                port ? port : "?");
    for (int step = 0; step < 3; ++step) {
        std::printf("step %d loss=%g\n", step, 1.0 / (step + 1));
        std::fflush(stdout);
        rankdeck::log(step, {{"grad_norm", 2.0 * step}});
    }
    return 0;
}
