// SPDX-License-Identifier: GPL-3.0-or-later
// Placeholder until the desktop app lands (issue 7).
int main() { return 0; }
