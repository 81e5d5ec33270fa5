import os, time, math
from tqdm import tqdm
rank = int(os.environ.get("RANK", 0))
for epoch in range(3):
    bar = tqdm(range(20), desc=f"Epoch {epoch}")
    for i in bar:
        loss = 1.0 / (1 + epoch * 20 + i)
        bar.set_postfix(loss=f"{loss:.4f}", lr=1e-3)
        time.sleep(0.01)
print("done", rank)
