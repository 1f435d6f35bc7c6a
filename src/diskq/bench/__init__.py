"""Running fio: command lines, JSON parsing, the numjobs sweep and the bench orchestration."""
