// SPDX-License-Identifier: GPL-3.0-or-later
// Placeholder until the CLI lands (issue 4).
int main() { return 0; }
