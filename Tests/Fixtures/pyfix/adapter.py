"""Answers questions that name python."""
from agentruntime import answer, main


@answer(confidence=0.95)
def python(message, ctx):
    if "python" not in message.lower():
        return None
    return f"python says hello from {ctx.process}, in conversation {ctx.chat.get('conversation')}"


main()
