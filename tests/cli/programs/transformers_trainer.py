import os, torch
from torch.utils.data import Dataset
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments

class RandomTokens(Dataset):
    def __init__(self, n, seq=32, vocab=128):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randint(0, vocab, (n, seq), generator=g)
    def __len__(self): return len(self.x)
    def __getitem__(self, i): return {"input_ids": self.x[i], "labels": self.x[i]}

cfg = GPT2Config(vocab_size=128, n_positions=64, n_embd=64, n_layer=2, n_head=2)
model = GPT2LMHeadModel(cfg)
args = TrainingArguments(output_dir="out", per_device_train_batch_size=8, per_device_eval_batch_size=8,
                         num_train_epochs=2, logging_steps=5, eval_strategy="epoch", save_strategy="no",
                         report_to=os.environ.get("REPORT_TO", "none"), use_cpu=True, learning_rate=5e-4,
                         disable_tqdm=False, seed=0, dataloader_num_workers=0)
Trainer(model=model, args=args, train_dataset=RandomTokens(256), eval_dataset=RandomTokens(64)).train()
