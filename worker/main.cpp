// SPDX-License-Identifier: GPL-3.0-or-later
// Placeholder until the training loop lands (issue 3).
int main() { return 0; }
